//! Building the Responses-API request body of one turn.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use serde_json::{json, Map, Value};

use crate::wire::{kind_of, wire_object, FromJson};
use crate::{Error, ErrorKind};

/// The model used when none is given (the v0 protocol's default).
pub const DEFAULT_MODEL: &str = "gpt-5.2-codex";

/// Whether `name` is a valid tool name: 1 to 64 characters from `A-Z`, `a-z`, `0-9`, `_`, `-`
/// (the Responses API's rule).
pub fn is_valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// How the model may use tools: `auto`, `required`, `none` or `function:<name>`.
///
/// ```
/// use agentwire_exec::ToolChoice;
///
/// let choice: ToolChoice = "function:web_fetch".parse()?;
/// assert_eq!(choice.to_value(), serde_json::json!({"type": "function", "name": "web_fetch"}));
/// assert_eq!(choice.to_string(), "function:web_fetch");
/// assert_eq!("auto".parse::<ToolChoice>()?.to_value(), "auto");
/// # Ok::<(), agentwire_exec::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ToolChoice {
    /// The model decides (the default).
    #[default]
    Auto,
    /// The model must call at least one tool.
    Required,
    /// The model must not call tools.
    None,
    /// The model must call this function tool.
    Function(String),
}

impl ToolChoice {
    /// The request's `tool_choice` value: a string, or `{"type":"function","name":...}`.
    pub fn to_value(&self) -> Value {
        match self {
            ToolChoice::Auto => Value::from("auto"),
            ToolChoice::Required => Value::from("required"),
            ToolChoice::None => Value::from("none"),
            ToolChoice::Function(name) => json!({"type": "function", "name": name}),
        }
    }
}

impl FromStr for ToolChoice {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "auto" => Ok(ToolChoice::Auto),
            "required" => Ok(ToolChoice::Required),
            "none" => Ok(ToolChoice::None),
            _ => match s.strip_prefix("function:") {
                Some(name) if is_valid_tool_name(name) => Ok(ToolChoice::Function(name.to_owned())),
                _ => Err(Error::new(ErrorKind::InvalidToolChoice {
                    value: s.to_owned(),
                })),
            },
        }
    }
}

impl fmt::Display for ToolChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolChoice::Auto => f.write_str("auto"),
            ToolChoice::Required => f.write_str("required"),
            ToolChoice::None => f.write_str("none"),
            ToolChoice::Function(name) => write!(f, "function:{name}"),
        }
    }
}

/// Generates `FromStr`, `Display` and `as_str` for a plain enum of names.
macro_rules! named_enum {
    ($name:ident, $kind:ident, $expected:literal, { $($variant:ident => $text:literal,)* }) => {
        impl $name {
            /// The name as the API spells it.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)*
                }
            }
        }

        impl FromStr for $name {
            type Err = Error;

            fn from_str(s: &str) -> Result<Self, Error> {
                match s {
                    $($text => Ok($name::$variant),)*
                    _ => Err(Error::new(ErrorKind::$kind {
                        value: s.to_owned(),
                        expected: $expected,
                    })),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

/// How much a reasoning model thinks before it answers: the request's `reasoning.effort`.
///
/// ```
/// use agentwire_exec::ReasoningEffort;
/// assert_eq!("high".parse::<ReasoningEffort>()?, ReasoningEffort::High);
/// assert_eq!("extreme".parse::<ReasoningEffort>().unwrap_err().code(), "invalid_option");
/// # Ok::<(), agentwire_exec::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReasoningEffort {
    /// `minimal`.
    Minimal,
    /// `low`.
    Low,
    /// `medium`.
    Medium,
    /// `high`.
    High,
}

named_enum!(ReasoningEffort, InvalidOption, "minimal, low, medium or high", {
    Minimal => "minimal",
    Low => "low",
    Medium => "medium",
    High => "high",
});

/// Whether and how a reasoning model summarizes its reasoning: the request's
/// `reasoning.summary`. The summary streams as `response.reasoning_summary_*` events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReasoningSummary {
    /// `auto`: the most detailed summary the model offers.
    Auto,
    /// `concise`.
    Concise,
    /// `detailed`.
    Detailed,
}

named_enum!(ReasoningSummary, InvalidOption, "auto, concise or detailed", {
    Auto => "auto",
    Concise => "concise",
    Detailed => "detailed",
});

/// The `include` value that asks for the encrypted reasoning of each reasoning item, so that
/// the items can be passed back as input in the next turn without server-side storage.
pub const INCLUDE_ENCRYPTED_REASONING: &str = "reasoning.encrypted_content";

/// The format of the model's text output: the request's `text.format`.
///
/// ```
/// use agentwire_exec::TextFormat;
/// use serde_json::json;
///
/// // A bare JSON Schema, named after its file.
/// let format = TextFormat::json_schema("person", json!({"type": "object"}))?;
/// assert_eq!(
///     format.to_value(),
///     json!({"type": "json_schema", "name": "person", "schema": {"type": "object"}, "strict": false})
/// );
/// // The API's own format object, as written.
/// let format = TextFormat::json_schema(
///     "ignored",
///     json!({"name": "person", "strict": true, "schema": {"type": "object"}}),
/// )?;
/// assert_eq!(format.to_value()["strict"], true);
/// # Ok::<(), agentwire_exec::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TextFormat {
    /// Plain text (the API's default).
    Text,
    /// Any JSON object.
    JsonObject,
    /// Structured output: JSON valid for a schema. The value is the whole format object
    /// (`type`, `name`, `schema`, `strict`, optional `description`).
    JsonSchema(Map<String, Value>),
}

impl TextFormat {
    /// A `json_schema` format from a file's JSON: either the API's format object (an object
    /// with `name` and an object `schema`, sent as written apart from `type`), or a bare JSON
    /// Schema object, named `name` and sent with `strict: false` (strict mode needs a rewritten
    /// schema, as for tools).
    ///
    /// Fails when the value is not an object, its schema is not an object, or the name is not
    /// 1 to 64 characters from `A-Za-z0-9_-`.
    pub fn json_schema(name: &str, value: Value) -> Result<Self, Error> {
        let Value::Object(object) = value else {
            return Err(Error::new(ErrorKind::SchemaNotObject {
                name: name.to_owned(),
                found: kind_of(&value),
            }));
        };
        let wrapped = matches!(object.get("schema"), Some(Value::Object(_)))
            && matches!(object.get("name"), Some(Value::String(_)));
        let mut format = Map::new();
        format.insert("type".to_owned(), Value::from("json_schema"));
        if wrapped {
            for (key, value) in object {
                if key != "type" {
                    format.insert(key, value);
                }
            }
        } else {
            format.insert("name".to_owned(), Value::from(name));
            format.insert("schema".to_owned(), Value::Object(object));
            format.insert("strict".to_owned(), Value::Bool(false));
        }
        let name = format.get("name").and_then(Value::as_str).unwrap_or("");
        if !is_valid_tool_name(name) {
            return Err(Error::new(ErrorKind::InvalidToolName {
                name: name.to_owned(),
            }));
        }
        Ok(TextFormat::JsonSchema(format))
    }

    /// The request's `text.format` value.
    pub fn to_value(&self) -> Value {
        match self {
            TextFormat::Text => json!({"type": "text"}),
            TextFormat::JsonObject => json!({"type": "json_object"}),
            TextFormat::JsonSchema(format) => Value::Object(format.clone()),
        }
    }
}

/// A `--tool` value, `name:json=PATH[:description=TEXT]`: a tool name, the path of its JSON
/// Schema file and optionally what the tool does.
///
/// The value is split at the first `:json=`, and the rest at the first `:description=`; the
/// name must be a valid tool name and the path non-empty. Reading the file is the caller's
/// business.
///
/// ```
/// use agentwire_exec::ToolSpec;
///
/// let spec: ToolSpec = "web_fetch:json=/tmp/schema.json".parse()?;
/// assert_eq!((spec.name.as_str(), spec.path.as_str()), ("web_fetch", "/tmp/schema.json"));
/// let spec: ToolSpec = "web_fetch:json=fetch.json:description=Fetch a URL: GET only".parse()?;
/// assert_eq!(spec.path, "fetch.json");
/// assert_eq!(spec.description.as_deref(), Some("Fetch a URL: GET only"));
/// assert_eq!("web fetch:json=x".parse::<ToolSpec>().unwrap_err().code(), "invalid_tool_name");
/// # Ok::<(), agentwire_exec::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolSpec {
    /// The tool's name.
    pub name: String,
    /// The schema file's path, as given.
    pub path: String,
    /// What the tool does, for the model.
    pub description: Option<String>,
}

impl FromStr for ToolSpec {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        let invalid = || Error::new(ErrorKind::InvalidToolSpec { spec: s.to_owned() });
        let (name, rest) = s.split_once(":json=").ok_or_else(invalid)?;
        let (path, description) = match rest.split_once(":description=") {
            Some((path, description)) => (path, Some(description.to_owned())),
            None => (rest, None),
        };
        if path.is_empty() {
            return Err(invalid());
        }
        if !is_valid_tool_name(name) {
            return Err(Error::new(ErrorKind::InvalidToolName {
                name: name.to_owned(),
            }));
        }
        Ok(ToolSpec {
            name: name.to_owned(),
            path: path.to_owned(),
            description,
        })
    }
}

/// A function tool: a name and the JSON Schema of its arguments.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct FunctionTool {
    /// The name the model calls it by.
    pub name: String,
    /// The JSON Schema of the arguments (an object), sent unchanged.
    pub parameters: Value,
    /// What the tool does, for the model.
    pub description: Option<String>,
}

impl FunctionTool {
    /// A tool named `name` with argument schema `parameters`.
    ///
    /// Fails when the name is not 1 to 64 characters from `A-Za-z0-9_-` or the schema is not a
    /// JSON object.
    pub fn new(name: impl Into<String>, parameters: Value) -> Result<Self, Error> {
        let name = name.into();
        if !is_valid_tool_name(&name) {
            return Err(Error::new(ErrorKind::InvalidToolName { name }));
        }
        if !parameters.is_object() {
            return Err(Error::new(ErrorKind::SchemaNotObject {
                name,
                found: kind_of(&parameters),
            }));
        }
        Ok(FunctionTool {
            name,
            parameters,
            description: None,
        })
    }

    /// A tool named `name` from a schema file's JSON: a bare JSON Schema object, or a function
    /// tool object (`{"type": "function", "description": ..., "parameters": {...}}`, `type`
    /// optional) whose `description` and `parameters` are used.
    ///
    /// ```
    /// use agentwire_exec::FunctionTool;
    /// use serde_json::json;
    ///
    /// let tool = FunctionTool::from_json(
    ///     "web_fetch",
    ///     json!({"description": "Fetch a URL", "parameters": {"type": "object"}}),
    /// )?;
    /// assert_eq!(tool.description.as_deref(), Some("Fetch a URL"));
    /// assert_eq!(tool.parameters, json!({"type": "object"}));
    /// # Ok::<(), agentwire_exec::Error>(())
    /// ```
    pub fn from_json(name: impl Into<String>, value: Value) -> Result<Self, Error> {
        let wrapper = match &value {
            Value::Object(map) => {
                matches!(map.get("parameters"), Some(Value::Object(_)))
                    && map
                        .get("type")
                        .is_none_or(|t| t.as_str() == Some("function"))
            }
            _ => false,
        };
        if !wrapper {
            return FunctionTool::new(name, value);
        }
        let Value::Object(mut map) = value else {
            unreachable!("checked above")
        };
        let parameters = map.remove("parameters").unwrap_or(Value::Null);
        let mut tool = FunctionTool::new(name, parameters)?;
        if let Some(Value::String(description)) = map.remove("description") {
            tool.description = Some(description);
        }
        Ok(tool)
    }

    /// Sets the description.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The request's tool object: `{"type":"function","name",["description",]"parameters",
    /// "strict":false}`. Strict mode is off: the schema is sent as written, and strict mode
    /// would require rewriting it.
    pub fn to_value(&self) -> Value {
        let mut tool = Map::new();
        tool.insert("type".to_owned(), Value::from("function"));
        tool.insert("name".to_owned(), Value::from(self.name.as_str()));
        if let Some(description) = &self.description {
            tool.insert("description".to_owned(), Value::from(description.as_str()));
        }
        tool.insert("parameters".to_owned(), self.parameters.clone());
        tool.insert("strict".to_owned(), Value::Bool(false));
        Value::Object(tool)
    }
}

/// Everything that shapes one turn's request: the `agentwire exec` flags, as data.
///
/// ```
/// use agentwire_exec::{FunctionTool, ReasoningEffort, ReasoningSummary, RequestOptions, ToolChoice};
/// use serde_json::json;
///
/// let mut options = RequestOptions::new();
/// options.prompt = Some("fetch https://example.com".to_owned());
/// options.instructions = Some("You are a tool-using assistant".to_owned());
/// options.tools.push(FunctionTool::new("web_fetch", json!({"type": "object"}))?);
/// options.tool_choice = ToolChoice::Function("web_fetch".to_owned());
/// options.session_id = Some("s-1".to_owned());
/// let request = options.build()?;
/// assert_eq!(
///     request.to_value(),
///     json!({
///         "model": "gpt-5.2-codex",
///         "instructions": "You are a tool-using assistant",
///         "input": [{"type": "message", "role": "user",
///                    "content": [{"type": "input_text", "text": "fetch https://example.com"}]}],
///         "tools": [{"type": "function", "name": "web_fetch",
///                    "parameters": {"type": "object"}, "strict": false}],
///         "tool_choice": {"type": "function", "name": "web_fetch"},
///         "parallel_tool_calls": true,
///         "include": ["reasoning.encrypted_content"],
///         "store": false,
///         "stream": true,
///         "prompt_cache_key": "s-1"
///     })
/// );
///
/// // A reasoning turn that continues a stored response.
/// options.reasoning_effort = Some(ReasoningEffort::High);
/// options.reasoning_summary = Some(ReasoningSummary::Auto);
/// options.store = true;
/// options.previous_response_id = Some("resp_1".to_owned());
/// let body = options.build()?.to_value();
/// assert_eq!(body["reasoning"], json!({"effort": "high", "summary": "auto"}));
/// assert_eq!((&body["store"], &body["previous_response_id"]), (&json!(true), &json!("resp_1")));
/// assert!(body.get("include").is_none());
/// # Ok::<(), agentwire_exec::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RequestOptions {
    /// The model ([`DEFAULT_MODEL`] by default).
    pub model: String,
    /// The user's text. Ignored when `input` is set.
    pub prompt: Option<String>,
    /// Responses input items, the whole conversation so far; replaces `prompt`.
    pub input: Option<Vec<Value>>,
    /// The system instructions.
    pub instructions: Option<String>,
    /// Text appended to the instructions after a blank line.
    pub append_system_prompt: Option<String>,
    /// Function tools, in order.
    pub tools: Vec<FunctionTool>,
    /// Adds the hosted `web_search` tool.
    pub web_search: bool,
    /// How the model may use tools.
    pub tool_choice: ToolChoice,
    /// Whether the model may call several tools in one turn (the API's default is `true`).
    pub parallel_tool_calls: bool,
    /// Sent as `prompt_cache_key`, so that turns of one session share the prompt cache.
    pub session_id: Option<String>,
    /// The most output tokens (reasoning included), sent as `max_output_tokens`.
    pub max_output_tokens: Option<u64>,
    /// `reasoning.effort`.
    pub reasoning_effort: Option<ReasoningEffort>,
    /// `reasoning.summary`.
    pub reasoning_summary: Option<ReasoningSummary>,
    /// `text.format`: structured output.
    pub text_format: Option<TextFormat>,
    /// Whether the provider stores the response (`store`), so that a later turn can continue
    /// from it with `previous_response_id`. Default `false`: the caller sends the whole
    /// conversation each turn.
    pub store: bool,
    /// Continues from a stored response: the provider prepends its conversation, so `input`
    /// holds only the new items, and a `function_call_output` may answer a call of that
    /// response.
    pub previous_response_id: Option<String>,
    /// The `include` list. `None` means the default: [`INCLUDE_ENCRYPTED_REASONING`] when
    /// `store` is `false` (so that reasoning items can be passed back as input next turn),
    /// nothing otherwise.
    pub include: Option<Vec<String>>,
}

impl Default for RequestOptions {
    fn default() -> Self {
        RequestOptions {
            model: DEFAULT_MODEL.to_owned(),
            prompt: None,
            input: None,
            instructions: None,
            append_system_prompt: None,
            tools: Vec::new(),
            web_search: false,
            tool_choice: ToolChoice::Auto,
            parallel_tool_calls: true,
            session_id: None,
            max_output_tokens: None,
            reasoning_effort: None,
            reasoning_summary: None,
            text_format: None,
            store: false,
            previous_response_id: None,
            include: None,
        }
    }
}

impl RequestOptions {
    /// Options with the defaults: the default model, no input yet, no tools, `auto`.
    pub fn new() -> Self {
        RequestOptions::default()
    }

    /// Builds and checks the request body.
    ///
    /// - `input` items are checked against the Responses input grammar (see
    ///   [`check_input`]) and sent unchanged; without them, `prompt` becomes one user message
    ///   and must not be blank.
    /// - `instructions` and `append_system_prompt` are joined with a blank line.
    /// - Tool names must be unique (a function named `web_search` conflicts with
    ///   `web_search: true`); `required` and `function:<name>` need tools, and the function
    ///   must be declared.
    pub fn build(&self) -> Result<Request, Error> {
        let continued = self.previous_response_id.is_some();
        let input = match (&self.input, &self.prompt) {
            (Some(items), _) => {
                check_items(items, continued)?;
                items.clone()
            }
            (None, Some(prompt)) => {
                if prompt.trim().is_empty() {
                    return Err(Error::new(ErrorKind::EmptyPrompt));
                }
                vec![json!({
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": prompt}],
                })]
            }
            (None, None) => return Err(Error::new(ErrorKind::NoInput)),
        };
        let instructions = match (&self.instructions, &self.append_system_prompt) {
            (Some(base), Some(more)) => Some(format!("{base}\n\n{more}")),
            (Some(one), None) | (None, Some(one)) => Some(one.clone()),
            (None, None) => None,
        };
        let mut seen = HashMap::new();
        let mut tools = Vec::with_capacity(self.tools.len() + 1);
        for tool in &self.tools {
            if seen.insert(tool.name.as_str(), ()).is_some() {
                return Err(Error::new(ErrorKind::DuplicateTool {
                    name: tool.name.clone(),
                }));
            }
            // Re-check what `FunctionTool::new` checks: the fields are public.
            FunctionTool::new(tool.name.clone(), tool.parameters.clone())?;
            tools.push(tool.to_value());
        }
        if self.web_search {
            if seen.contains_key("web_search") {
                return Err(Error::new(ErrorKind::DuplicateTool {
                    name: "web_search".to_owned(),
                }));
            }
            tools.push(json!({"type": "web_search", "external_web_access": true}));
        }
        match &self.tool_choice {
            ToolChoice::Required | ToolChoice::Function(_) if tools.is_empty() => {
                return Err(Error::new(ErrorKind::ToolChoiceWithoutTools {
                    choice: self.tool_choice.to_string(),
                }));
            }
            ToolChoice::Function(name) if !seen.contains_key(name.as_str()) => {
                return Err(Error::new(ErrorKind::UnknownToolChoiceFunction {
                    name: name.clone(),
                }));
            }
            _ => {}
        }
        let mut reasoning = Map::new();
        if let Some(effort) = self.reasoning_effort {
            reasoning.insert("effort".to_owned(), Value::from(effort.as_str()));
        }
        if let Some(summary) = self.reasoning_summary {
            reasoning.insert("summary".to_owned(), Value::from(summary.as_str()));
        }
        let include = match &self.include {
            Some(include) => include.clone(),
            None if self.store => Vec::new(),
            None => vec![INCLUDE_ENCRYPTED_REASONING.to_owned()],
        };
        Ok(Request {
            model: self.model.clone(),
            instructions,
            input,
            tools: Some(tools),
            tool_choice: Some(self.tool_choice.to_value()),
            parallel_tool_calls: Some(self.parallel_tool_calls),
            max_output_tokens: self.max_output_tokens,
            reasoning: (!reasoning.is_empty()).then_some(Value::Object(reasoning)),
            text: self
                .text_format
                .as_ref()
                .map(|format| json!({"format": format.to_value()})),
            include: (!include.is_empty()).then_some(include),
            store: Some(self.store),
            stream: Some(true),
            previous_response_id: self.previous_response_id.clone(),
            prompt_cache_key: self.session_id.clone(),
            extra: Map::new(),
        })
    }
}

wire_object! {
    /// A Responses-API request body, as [`RequestOptions::build`] makes it (or as read back
    /// with [`Request::from_value`]). Members are written in this order.
    pub struct Request {
        /// The model.
        model: req String,
        /// The system instructions.
        instructions: opt String,
        /// The input items.
        input: req Vec<Value>,
        /// The tools: function tools, then `web_search`.
        tools: opt Vec<Value>,
        /// `auto`, `required`, `none` or `{"type":"function","name":...}`.
        tool_choice: opt Value,
        /// Whether the model may call several tools in one turn.
        parallel_tool_calls: opt bool,
        /// The most output tokens, reasoning included.
        max_output_tokens: opt u64,
        /// `{"effort": ..., "summary": ...}` for reasoning models.
        reasoning: opt Value,
        /// `{"format": ...}`: the format of the text output.
        text: opt Value,
        /// Extra output to include, such as `reasoning.encrypted_content`.
        include: opt Vec<String>,
        /// Whether the provider stores the response (by default `false`: the caller sends the
        /// whole conversation each turn).
        store: opt bool,
        /// Always `true`: the response streams as server-sent events.
        stream: opt bool,
        /// The stored response this turn continues from.
        previous_response_id: opt String,
        /// The prompt cache key (the session id).
        prompt_cache_key: opt String,
    }
}

impl Request {
    /// Reads a request body, checking its input items like [`RequestOptions::build`] does.
    pub fn from_value(value: Value) -> Result<Request, Error> {
        let request = Request::from_json(value).map_err(|e| {
            Error::new(ErrorKind::InvalidRequest {
                reason: crate::wire::describe(&e),
            })
        })?;
        check_items(&request.input, request.previous_response_id.is_some())?;
        Ok(request)
    }

    /// The body as a JSON value.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The body as compact JSON, as sent.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The body as indented JSON, for logs.
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The function tools: `(name, parameters)` in order.
    pub fn function_tools(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.tools.iter().flatten().filter_map(|tool| {
            if tool.get("type")?.as_str()? != "function" {
                return None;
            }
            let name = tool.get("name")?.as_str()?;
            Some((name, tool.get("parameters").unwrap_or(&Value::Null)))
        })
    }

    /// Whether `tool_choice` is `none`: the model must not call tools.
    pub fn tool_choice_is_none(&self) -> bool {
        self.tool_choice.as_ref().and_then(Value::as_str) == Some("none")
    }

    /// Whether `include` asks for `value`.
    pub fn includes(&self, value: &str) -> bool {
        self.include.iter().flatten().any(|v| v == value)
    }

    /// The function named by `tool_choice`, when it names one.
    pub fn tool_choice_function(&self) -> Option<&str> {
        let choice = self.tool_choice.as_ref()?;
        if choice.get("type")?.as_str()? == "function" {
            choice.get("name")?.as_str()
        } else {
            None
        }
    }
}

/// Checks input items against the Responses input grammar:
///
/// - every item is an object; `type` defaults to `message` when there is a `role`;
/// - a `message` has `role` `user`, `assistant`, `system` or `developer` and `content` that is
///   a string or a list of part objects with a string `type` (`input_text` and `output_text`
///   parts have a string `text`);
/// - a `function_call` has string `call_id` (unique and non-empty), `name` and `arguments`;
/// - a `function_call_output` has a string `call_id` naming an earlier `function_call`, and an
///   `output` that is a string or a list;
/// - every `function_call` has a `function_call_output`;
/// - other item types (`reasoning`, `web_search_call`, `item_reference`, ...) pass unchecked.
///
/// Items are never changed: unknown members (`id`, `status`, ...) are sent as given.
pub fn check_input(items: &[Value]) -> Result<(), Error> {
    check_items(items, false)
}

/// [`check_input`]; a turn that `continued` a stored response may answer that response's calls,
/// so outputs without an earlier call are accepted then.
pub(crate) fn check_items(items: &[Value], continued: bool) -> Result<(), Error> {
    if items.is_empty() {
        return Err(Error::new(ErrorKind::NoInput));
    }
    let invalid =
        |index: usize, reason: String| Error::new(ErrorKind::InvalidInputItem { index, reason });
    // call_id -> (index, answered)
    let mut calls: HashMap<&str, (usize, bool)> = HashMap::new();
    let mut order = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let Value::Object(item) = item else {
            return Err(invalid(
                index,
                format!("an input item must be an object, found {}", kind_of(item)),
            ));
        };
        let item_type = match item.get("type") {
            Some(Value::String(t)) => t.as_str(),
            Some(other) => {
                return Err(invalid(
                    index,
                    format!("`type` must be a string, found {}", kind_of(other)),
                ))
            }
            None if item.contains_key("role") => "message",
            None => {
                return Err(invalid(
                    index,
                    "the item has no `type` and no `role`".to_owned(),
                ))
            }
        };
        let string = |key: &str| -> Result<&str, Error> {
            match item.get(key) {
                Some(Value::String(s)) => Ok(s),
                Some(other) => Err(invalid(
                    index,
                    format!(
                        "{item_type}: `{key}` must be a string, found {}",
                        kind_of(other)
                    ),
                )),
                None => Err(invalid(index, format!("{item_type}: missing `{key}`"))),
            }
        };
        match item_type {
            "message" => {
                let role = string("role")?;
                if !matches!(role, "user" | "assistant" | "system" | "developer") {
                    return Err(invalid(
                        index,
                        format!(
                            "message: `role` must be user, assistant, system or developer, found `{role}`"
                        ),
                    ));
                }
                match item.get("content") {
                    Some(Value::String(_)) => {}
                    Some(Value::Array(parts)) => {
                        for (p, part) in parts.iter().enumerate() {
                            check_part(part).map_err(|reason| {
                                invalid(index, format!("message: content[{p}]: {reason}"))
                            })?;
                        }
                    }
                    Some(other) => {
                        return Err(invalid(
                            index,
                            format!(
                                "message: `content` must be a string or a list of parts, found {}",
                                kind_of(other)
                            ),
                        ))
                    }
                    None => return Err(invalid(index, "message: missing `content`".to_owned())),
                }
            }
            "function_call" => {
                let call_id = string("call_id")?;
                string("name")?;
                string("arguments")?;
                if call_id.is_empty() {
                    return Err(invalid(
                        index,
                        "function_call: `call_id` is empty".to_owned(),
                    ));
                }
                if calls.insert(call_id, (index, false)).is_some() {
                    return Err(Error::new(ErrorKind::DuplicateCallId {
                        index,
                        call_id: call_id.to_owned(),
                    }));
                }
                order.push(call_id);
            }
            "function_call_output" => {
                let call_id = string("call_id")?;
                match item.get("output") {
                    Some(Value::String(_) | Value::Array(_)) => {}
                    Some(other) => {
                        return Err(invalid(
                            index,
                            format!(
                            "function_call_output: `output` must be a string or a list, found {}",
                            kind_of(other)
                        ),
                        ))
                    }
                    None => {
                        return Err(invalid(
                            index,
                            "function_call_output: missing `output`".to_owned(),
                        ))
                    }
                }
                match calls.get_mut(call_id) {
                    Some((_, answered)) => *answered = true,
                    None if continued => {}
                    None => {
                        return Err(Error::new(ErrorKind::OrphanFunctionCallOutput {
                            index,
                            call_id: call_id.to_owned(),
                        }))
                    }
                }
            }
            _ => {}
        }
    }
    for call_id in order {
        if let Some(&(index, false)) = calls.get(call_id) {
            return Err(Error::new(ErrorKind::MissingFunctionCallOutput {
                index,
                call_id: call_id.to_owned(),
            }));
        }
    }
    Ok(())
}

fn check_part(part: &Value) -> Result<(), String> {
    let Value::Object(part) = part else {
        return Err(format!(
            "a content part must be an object, found {}",
            kind_of(part)
        ));
    };
    let part_type = match part.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(other) => return Err(format!("`type` must be a string, found {}", kind_of(other))),
        None => return Err("missing `type`".to_owned()),
    };
    if matches!(part_type, "input_text" | "output_text") {
        match part.get("text") {
            Some(Value::String(_)) => {}
            Some(other) => {
                return Err(format!(
                    "{part_type}: `text` must be a string, found {}",
                    kind_of(other)
                ))
            }
            None => return Err(format!("{part_type}: missing `text`")),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(items: Value) -> &'static str {
        let Value::Array(items) = items else { panic!() };
        match check_input(&items) {
            Ok(()) => "ok",
            Err(e) => e.code(),
        }
    }

    #[test]
    fn input_grammar() {
        let user = json!({"role": "user", "content": "hi"});
        let call =
            json!({"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"});
        let output = json!({"type": "function_call_output", "call_id": "c1", "output": "ok"});
        assert_eq!(code(json!([user, call, output])), "ok");
        assert_eq!(code(json!([])), "no_input");
        assert_eq!(code(json!([user, output])), "orphan_function_call_output");
        assert_eq!(code(json!([user, call])), "missing_function_call_output");
        assert_eq!(code(json!([call, call, output])), "duplicate_call_id");
        assert_eq!(
            code(json!([{"role": "robot", "content": "x"}])),
            "invalid_input_item"
        );
        assert_eq!(code(json!([{"content": "x"}])), "invalid_input_item");
        assert_eq!(
            code(json!([{"role": "user", "content": [{"type": "input_text"}]}])),
            "invalid_input_item"
        );
        assert_eq!(
            code(json!([{"type": "reasoning", "summary": []}, user])),
            "ok"
        );
        assert_eq!(
            code(
                json!([call, {"type": "function_call_output", "call_id": "c1", "output": [{"type": "input_text", "text": "x"}]}])
            ),
            "ok"
        );
    }

    #[test]
    fn options_errors() {
        let mut options = RequestOptions::new();
        assert_eq!(options.build().unwrap_err().code(), "no_input");
        options.prompt = Some(" \n".to_owned());
        assert_eq!(options.build().unwrap_err().code(), "empty_prompt");
        options.prompt = Some("hi".to_owned());
        options.tool_choice = ToolChoice::Required;
        assert_eq!(
            options.build().unwrap_err().code(),
            "tool_choice_without_tools"
        );
        options.web_search = true;
        assert!(options.build().is_ok());
        options.tool_choice = ToolChoice::Function("f".to_owned());
        assert_eq!(
            options.build().unwrap_err().code(),
            "unknown_tool_choice_function"
        );
        options
            .tools
            .push(FunctionTool::new("web_search", json!({})).unwrap());
        assert_eq!(options.build().unwrap_err().code(), "duplicate_tool");
        assert_eq!(
            FunctionTool::new("f", json!([])).unwrap_err().code(),
            "schema_not_object"
        );
        assert_eq!(
            FunctionTool::new("", json!({})).unwrap_err().code(),
            "invalid_tool_name"
        );
        assert_eq!(
            "function:".parse::<ToolChoice>().unwrap_err().code(),
            "invalid_tool_choice"
        );
        assert_eq!(
            "x".parse::<ToolSpec>().unwrap_err().code(),
            "invalid_tool_spec"
        );
        assert_eq!(
            "x:json=".parse::<ToolSpec>().unwrap_err().code(),
            "invalid_tool_spec"
        );
        let spec: ToolSpec = "a:json=b:json=c".parse().unwrap();
        assert_eq!((spec.name.as_str(), spec.path.as_str()), ("a", "b:json=c"));
        assert!(is_valid_tool_name(&"a".repeat(64)));
        assert!(!is_valid_tool_name(&"a".repeat(65)));
        assert!(!is_valid_tool_name("é"));
    }
}
