//! `agentwire exec`: one turn of a model with JSON-Schema tools, streamed as Responses-API
//! events (JSONL), against a provider (Responses or Chat Completions) or an offline mock.

mod http;
mod turn;

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use agentwire_exec::{
    Event, FunctionTool, MockMode, Normalizer, Outcome, OutputItem, ReasoningEffort,
    ReasoningSummary, Request, RequestOptions, RetryPolicy, TextFormat, ToolChoice, ToolSpec,
};
use serde_json::Value;

use crate::{input, CliError};

/// The provider used when neither `--base-url` nor `OPENAI_BASE_URL` is set.
const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// The default `--idle-timeout`: five minutes without a byte, as codex waits for a stream.
const DEFAULT_IDLE_TIMEOUT: u64 = 300;

const EXIT_CODES: &str = "\
Exit status: 0 when the response completed (a turn that asks for tool calls completed too);
1 when it failed, was incomplete, or the stream was cut or stalled (in --json mode an `error`
event and a final `response.failed` are printed first); 2 for usage errors (bad flags,
unreadable or invalid files given by flags, a missing OPENAI_API_KEY); 130 or 143 when SIGINT or
SIGTERM cancelled the turn (after a final `response.failed` with code `cancelled`).";

/// Which API the upstream speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Api {
    /// POST {base_url}/responses (the Responses API).
    Responses,
    /// POST {base_url}/chat/completions (Chat Completions: llama.cpp, vLLM, Ollama, ...).
    Chat,
}

/// Arguments of `agentwire exec`.
#[derive(Debug, clap::Args)]
#[command(after_long_help = EXIT_CODES)]
pub(crate) struct Args {
    /// The user's text; `-` reads it from standard input. Ignored with --input-json.
    #[arg(long, value_name = "TEXT")]
    prompt: Option<String>,
    /// The model.
    #[arg(long, default_value = agentwire_exec::DEFAULT_MODEL)]
    model: String,
    /// The system instructions.
    #[arg(long, value_name = "TEXT")]
    instructions: Option<String>,
    /// Another name for --instructions.
    #[arg(long, value_name = "TEXT", conflicts_with = "instructions")]
    system: Option<String>,
    /// Text appended to the instructions after a blank line.
    #[arg(long, value_name = "TEXT")]
    append_system_prompt: Option<String>,
    /// A function tool, the file of its arguments' JSON Schema (an object, or a function tool
    /// object with `description` and `parameters`), and optionally its description; repeatable.
    #[arg(long = "tool", value_name = "NAME:json=PATH[:description=TEXT]")]
    tools: Vec<String>,
    /// Adds the hosted web_search tool (with external_web_access).
    #[arg(long)]
    web_search: bool,
    /// auto, required, none or function:<name>.
    #[arg(long, value_name = "CHOICE", default_value = "auto", value_parser = parse_tool_choice)]
    tool_choice: ToolChoice,
    /// A JSON array of Responses input items, the whole conversation so far (`-` for standard
    /// input); replaces --prompt.
    #[arg(long, value_name = "PATH")]
    input_json: Option<PathBuf>,
    /// How much a reasoning model thinks: minimal, low, medium or high.
    #[arg(long, value_name = "EFFORT", value_parser = parse_effort)]
    reasoning_effort: Option<ReasoningEffort>,
    /// Stream a summary of the reasoning: auto, concise or detailed.
    #[arg(long, value_name = "KIND", value_parser = parse_summary)]
    reasoning_summary: Option<ReasoningSummary>,
    /// Let the provider store the response (store: true), so that a later turn can continue
    /// from it with --previous-response-id. Without it, requests ask for
    /// reasoning.encrypted_content so that reasoning items can be passed back with --input-json.
    #[arg(long)]
    store: bool,
    /// Continue from a stored response: --input-json (or --prompt) then holds only the new items.
    #[arg(long, value_name = "ID")]
    previous_response_id: Option<String>,
    /// Also ask for this output (the request's `include`); repeatable.
    #[arg(long, value_name = "ITEM")]
    include: Vec<String>,
    /// The most output tokens, reasoning included.
    #[arg(long, value_name = "N")]
    max_output_tokens: Option<u64>,
    /// Structured output: json_schema=PATH (a JSON Schema, or the API's format object with
    /// name and schema), json_object or text.
    #[arg(long, value_name = "FORMAT")]
    text_format: Option<String>,
    /// Print the events as JSONL on standard output, and nothing else.
    #[arg(long)]
    json: bool,
    /// Copy each raw upstream event (JSON) to standard error.
    #[arg(long)]
    trace: bool,
    /// Write the request body (indented JSON) to this file, replacing it.
    #[arg(long, value_name = "PATH")]
    log_requests: Option<PathBuf>,
    /// Append the emitted event lines (exactly what --json prints) to this file.
    #[arg(long, value_name = "PATH")]
    log_responses: Option<PathBuf>,
    /// The session id, sent as prompt_cache_key so that turns share the prompt cache.
    #[arg(long, value_name = "ID")]
    session_id: Option<String>,
    /// Use an offline, deterministic mock instead of the provider (no credentials needed).
    #[arg(long)]
    mock: bool,
    /// The mock: echo (the request as text), text, tool-call or tool-loop.
    #[arg(long, value_name = "MODE", requires = "mock", default_value = "echo", value_parser = parse_mock_mode)]
    mock_mode: MockMode,
    /// The API the provider speaks: responses (POST {base_url}/responses) or chat (POST
    /// {base_url}/chat/completions, for servers that speak only Chat Completions).
    #[arg(long, value_enum, default_value = "responses")]
    api: Api,
    /// The provider's API root [default: $OPENAI_BASE_URL, else https://api.openai.com/v1].
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// An extra request header, NAME:VALUE; repeatable. It replaces a built-in header of the
    /// same name (Authorization, ...).
    #[arg(long = "header", value_name = "NAME:VALUE", value_parser = parse_header)]
    headers: Vec<(String, String)>,
    /// Ask the model for at most one tool call per turn.
    #[arg(long)]
    no_parallel_tool_calls: bool,
    /// Retries after HTTP 408, 429 and 5xx answers and failed connections.
    #[arg(long, value_name = "N", default_value_t = 2)]
    max_retries: u32,
    /// The wait before the first retry, doubling each time (a Retry-After header wins).
    #[arg(long, value_name = "MS", default_value_t = 500)]
    retry_backoff_ms: u64,
    /// End the turn when the upstream sends no byte for this long (waiting for the answer
    /// included; waits between retries excluded).
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_IDLE_TIMEOUT)]
    idle_timeout: u64,
    /// The longest one attempt may take, streaming included [default: no limit].
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<u64>,
    /// The largest upstream event accepted.
    #[arg(long, value_name = "BYTES", default_value_t = agentwire_exec::DEFAULT_MAX_EVENT_BYTES)]
    max_event_bytes: usize,
}

fn parse_tool_choice(s: &str) -> Result<ToolChoice, String> {
    s.parse().map_err(|e: agentwire_exec::Error| e.message())
}

fn parse_mock_mode(s: &str) -> Result<MockMode, String> {
    s.parse().map_err(|e: agentwire_exec::Error| e.message())
}

fn parse_effort(s: &str) -> Result<ReasoningEffort, String> {
    s.parse().map_err(|e: agentwire_exec::Error| e.message())
}

fn parse_summary(s: &str) -> Result<ReasoningSummary, String> {
    s.parse().map_err(|e: agentwire_exec::Error| e.message())
}

/// `NAME:VALUE`: a header name of token characters, a value without line breaks.
fn parse_header(s: &str) -> Result<(String, String), String> {
    let (name, value) = s
        .split_once(':')
        .ok_or_else(|| format!("expected NAME:VALUE, found `{s}`"))?;
    let name = name.trim();
    let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    if name.is_empty() || !name.bytes().all(token) {
        return Err(format!("`{name}` is not a valid header name"));
    }
    let value = value.trim();
    if value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
        return Err(format!("the value of header `{name}` holds a line break"));
    }
    Ok((name.to_owned(), value.to_owned()))
}

/// How a turn went wrong once it started.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ExecError {
    /// The response failed or the stream was cut.
    #[error("the response failed: {0}")]
    Failed(String),
    /// The response ended with `response.incomplete`.
    #[error("the response is incomplete: {0}")]
    Incomplete(String),
    /// A signal cancelled the turn.
    #[error("the turn was cancelled by {}", signal_name(*.0))]
    Cancelled(i32),
    /// Standard output could not be written.
    #[error("cannot write standard output: {0}")]
    Stdout(io::Error),
    /// The response log could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Log { path: PathBuf, source: io::Error },
}

impl ExecError {
    /// 128 + the signal for a cancelled turn (130 for SIGINT, 143 for SIGTERM), else 1.
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            ExecError::Cancelled(signal) => u8::try_from(128 + signal).unwrap_or(1),
            _ => 1,
        }
    }
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        signal_hook::consts::SIGINT => "SIGINT",
        signal_hook::consts::SIGTERM => "SIGTERM",
        _ => "a signal",
    }
}

pub(crate) fn run(args: &Args) -> Result<(), CliError> {
    let request = build_request(args)?;
    let chat = if args.api == Api::Chat && !args.mock {
        let chat = request
            .to_chat_completions()
            .map_err(|e| CliError::Usage(e.to_string()))?;
        for note in &chat.notes {
            eprintln!("agentwire: note: {note}");
        }
        Some(chat.body)
    } else {
        None
    };
    let endpoint = if args.mock {
        None
    } else {
        Some(endpoint(args)?)
    };
    if let Some(path) = &args.log_requests {
        let body = match &chat {
            Some(body) => serde_json::to_string_pretty(body).unwrap_or_default(),
            None => request.to_json_pretty(),
        };
        write_private(path, false, format!("{body}\n").as_bytes())
            .map_err(|e| CliError::Usage(format!("cannot write {}: {e}", path.display())))?;
    }
    warn_about_reasoning_input(&request);
    let log = match &args.log_responses {
        Some(path) => Some((
            path.clone(),
            open_private(path, true)
                .map_err(|e| CliError::Usage(format!("cannot open {}: {e}", path.display())))?,
        )),
        None => None,
    };
    let mut output = Output {
        json: args.json,
        stdout: io::stdout().lock(),
        log,
        text: TextState::default(),
        first_error: None,
        incomplete_reason: None,
    };
    // From here on SIGINT and SIGTERM end the turn with a terminal event instead of killing the
    // process (a second one kills it).
    let cancel = turn::Cancel::install()
        .map_err(|e| CliError::Usage(format!("cannot handle signals: {e}")))?;
    let outcome = match &endpoint {
        None => turn::run_mock(args, &request, &cancel, &mut output)?,
        Some(endpoint) => {
            let body = match &chat {
                Some(body) => body.to_string(),
                None => request.to_json(),
            };
            turn::run_upstream(args, endpoint, &request, &body, &cancel, &mut output)?
        }
    };
    output.finish()?;
    match outcome {
        turn::End::Outcome(Some(Outcome::Completed)) => Ok(()),
        turn::End::Outcome(Some(Outcome::Incomplete)) => Err(ExecError::Incomplete(
            output
                .incomplete_reason
                .unwrap_or_else(|| "no reason given".to_owned()),
        )
        .into()),
        turn::End::Cancelled(signal) => Err(ExecError::Cancelled(signal).into()),
        turn::End::Outcome(_) => Err(ExecError::Failed(
            output
                .first_error
                .unwrap_or_else(|| "no error message".to_owned()),
        )
        .into()),
    }
}

/// The API rejects a stateless request whose reasoning items lost their encrypted content
/// (`Item with id 'rs_…' not found`): say why before it does.
fn warn_about_reasoning_input(request: &Request) {
    if request.store == Some(true) || request.previous_response_id.is_some() {
        return;
    }
    let bare = request
        .input
        .iter()
        .filter(|item| {
            item.get("type").and_then(Value::as_str) == Some("reasoning")
                && item.get("encrypted_content").is_none_or(Value::is_null)
        })
        .count();
    if bare > 0 {
        eprintln!(
            "agentwire: warning: {bare} reasoning item(s) of --input-json have no \
             encrypted_content; with store false the provider cannot restore them (pass back the \
             items of output_item.done whole)"
        );
    }
}

/// The request body from the flags; every problem is a usage error.
fn build_request(args: &Args) -> Result<Request, CliError> {
    let usage = |e: agentwire_exec::Error| CliError::Usage(e.to_string());
    let mut options = RequestOptions::new();
    options.model.clone_from(&args.model);
    options.instructions = args.instructions.clone().or_else(|| args.system.clone());
    options
        .append_system_prompt
        .clone_from(&args.append_system_prompt);
    options.web_search = args.web_search;
    options.tool_choice = args.tool_choice.clone();
    options.parallel_tool_calls = !args.no_parallel_tool_calls;
    options.session_id.clone_from(&args.session_id);
    options.reasoning_effort = args.reasoning_effort;
    options.reasoning_summary = args.reasoning_summary;
    options.store = args.store;
    options
        .previous_response_id
        .clone_from(&args.previous_response_id);
    options.max_output_tokens = args.max_output_tokens;
    if !args.include.is_empty() {
        let mut include = Vec::new();
        if !args.store {
            include.push(agentwire_exec::INCLUDE_ENCRYPTED_REASONING.to_owned());
        }
        for item in &args.include {
            if !include.contains(item) {
                include.push(item.clone());
            }
        }
        options.include = Some(include);
    }
    if let Some(format) = &args.text_format {
        options.text_format = Some(text_format(format)?);
    }
    let stdin_prompt = args.prompt.as_deref() == Some("-");
    let stdin_input = args.input_json.as_deref() == Some(Path::new("-"));
    if stdin_prompt && stdin_input {
        return Err(CliError::Usage(
            "--prompt - and --input-json - cannot both read standard input".to_owned(),
        ));
    }
    if let Some(path) = &args.input_json {
        if args.prompt.is_some() {
            eprintln!(
                "agentwire: --prompt is ignored: --input-json gives the whole input (add the \
                 user's turn to the items instead)"
            );
        }
        let text = read_flag_file(path, "--input-json")?;
        let items: Value = serde_json::from_str(&text).map_err(|e| {
            CliError::Usage(format!("--input-json {}: not JSON: {e}", path.display()))
        })?;
        let Value::Array(items) = items else {
            return Err(CliError::Usage(format!(
                "--input-json {}: expected a JSON array of input items",
                path.display()
            )));
        };
        options.input = Some(items);
    } else if stdin_prompt {
        options.prompt = Some(input::read_text(None)?);
    } else {
        options.prompt.clone_from(&args.prompt);
    }
    for spec in &args.tools {
        let spec: ToolSpec = spec.parse().map_err(usage)?;
        let text = read_flag_file(Path::new(&spec.path), &format!("--tool {}", spec.name))?;
        let schema: Value = serde_json::from_str(&text).map_err(|e| {
            CliError::Usage(format!(
                "--tool {}: {} is not JSON: {e}",
                spec.name, spec.path
            ))
        })?;
        let mut tool = FunctionTool::from_json(spec.name, schema).map_err(usage)?;
        if let Some(description) = spec.description {
            tool = tool.with_description(description);
        }
        options.tools.push(tool);
    }
    options.build().map_err(usage)
}

/// `--text-format`: `text`, `json_object` or `json_schema=PATH` (named after the file).
fn text_format(value: &str) -> Result<TextFormat, CliError> {
    match value {
        "text" => Ok(TextFormat::Text),
        "json_object" => Ok(TextFormat::JsonObject),
        _ => {
            let Some(path) = value.strip_prefix("json_schema=").filter(|p| !p.is_empty()) else {
                return Err(CliError::Usage(format!(
                    "--text-format: expected json_schema=PATH, json_object or text, found \
                     `{value}`"
                )));
            };
            let text = read_flag_file(Path::new(path), "--text-format")?;
            let schema: Value = serde_json::from_str(&text)
                .map_err(|e| CliError::Usage(format!("--text-format: {path} is not JSON: {e}")))?;
            // A bare schema is named after its file, in the characters a name may hold.
            let stem = Path::new(path)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let mut name: String = stem
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .take(64)
                .collect();
            if name.is_empty() {
                name.push_str("output");
            }
            TextFormat::json_schema(&name, schema)
                .map_err(|e| CliError::Usage(format!("--text-format: {e}")))
        }
    }
}

/// Reads a file named by a flag (`-` is standard input); failures are usage errors.
fn read_flag_file(path: &Path, flag: &str) -> Result<String, CliError> {
    if path == Path::new("-") {
        return input::read_text(None);
    }
    std::fs::read_to_string(path)
        .map_err(|e| CliError::Usage(format!("{flag}: cannot read {}: {e}", path.display())))
}

fn endpoint(args: &Args) -> Result<http::Endpoint, CliError> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let base_url = args.base_url.clone().or_else(|| env("OPENAI_BASE_URL"));
    let api_key = env("OPENAI_API_KEY");
    let authorized = args
        .headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("authorization"));
    // OpenAI needs a key; a server of one's own (--base-url) may not.
    if api_key.is_none() && base_url.is_none() && !authorized {
        return Err(CliError::Usage(
            "OPENAI_API_KEY is not set (use --mock to run offline, or --base-url for a server \
             that needs no key)"
                .to_owned(),
        ));
    }
    let base_url = base_url.unwrap_or_else(|| DEFAULT_BASE_URL.to_owned());
    if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
        return Err(CliError::Usage(format!(
            "--base-url must start with http:// or https://, found `{base_url}`"
        )));
    }
    let path = match args.api {
        Api::Responses => "responses",
        Api::Chat => "chat/completions",
    };
    let timeout = args.timeout.map(|t| Duration::from_secs(t.max(1)));
    Ok(http::Endpoint {
        url: format!("{}/{path}", base_url.trim_end_matches('/')),
        api_key,
        organization: env("OPENAI_ORG_ID"),
        project: env("OPENAI_PROJECT_ID"),
        headers: args.headers.clone(),
        retry: RetryPolicy::new(
            args.max_retries,
            Duration::from_millis(args.retry_backoff_ms),
            Duration::from_secs(30).max(Duration::from_millis(args.retry_backoff_ms)),
        ),
        connect_timeout: Duration::from_secs(30).min(timeout.unwrap_or(Duration::MAX)),
        timeout,
    })
}

fn trace(raw: &str) {
    let mut stderr = io::stderr().lock();
    // Diagnostics are best effort: a closed standard error must not fail the turn.
    let _ = writeln!(stderr, "{raw}");
}

/// Where emitted events go: standard output (as JSONL, or as text), and the response log.
struct Output {
    json: bool,
    stdout: io::StdoutLock<'static>,
    log: Option<(PathBuf, File)>,
    text: TextState,
    first_error: Option<String>,
    incomplete_reason: Option<String>,
}

/// Text-mode rendering: text deltas as they come, one line per tool call.
#[derive(Debug, Default)]
struct TextState {
    printed: bool,
    at_line_start: bool,
    item: Option<String>,
}

impl Output {
    /// Emits the events a normalizer gave, then its notes (on standard error).
    fn emit(&mut self, events: &[Event], normalizer: &mut Normalizer) -> Result<(), ExecError> {
        for note in normalizer.take_notes() {
            eprintln!("agentwire: note: {note}");
        }
        if events.is_empty() {
            return Ok(());
        }
        for event in events {
            let mut line = agentwire_exec::to_string(event);
            line.push('\n');
            if let Some((path, log)) = &mut self.log {
                log.write_all(line.as_bytes())
                    .map_err(|source| ExecError::Log {
                        path: path.clone(),
                        source,
                    })?;
            }
            self.observe(event);
            if self.json {
                self.stdout
                    .write_all(line.as_bytes())
                    .map_err(ExecError::Stdout)?;
            } else {
                self.render(event).map_err(ExecError::Stdout)?;
            }
        }
        self.stdout.flush().map_err(ExecError::Stdout)
    }

    /// Remembers what the exit diagnostics need.
    fn observe(&mut self, event: &Event) {
        match event {
            Event::Error(e) if self.first_error.is_none() => {
                self.first_error = Some(e.text().unwrap_or("upstream error").to_owned());
            }
            Event::ResponseIncomplete(e) => {
                self.incomplete_reason = e
                    .response
                    .incomplete_details
                    .as_ref()
                    .and_then(|d| d.get("reason"))
                    .and_then(Value::as_str)
                    .map(str::to_owned);
            }
            _ => {}
        }
    }

    fn render(&mut self, event: &Event) -> io::Result<()> {
        let state = &mut self.text;
        match event {
            Event::OutputTextDelta(delta) => {
                if delta.delta.is_empty() {
                    return Ok(());
                }
                if state.printed && !state.at_line_start && state.item != delta.item_id {
                    self.stdout.write_all(b"\n")?;
                }
                self.stdout.write_all(delta.delta.as_bytes())?;
                state.printed = true;
                state.at_line_start = delta.delta.ends_with('\n');
                state.item.clone_from(&delta.item_id);
            }
            Event::OutputItemDone(done) => {
                if let OutputItem::FunctionCall(call) = &done.item {
                    if state.printed && !state.at_line_start {
                        self.stdout.write_all(b"\n")?;
                    }
                    writeln!(
                        self.stdout,
                        "tool call: {} {} (call_id {})",
                        call.name,
                        call.arguments.as_deref().unwrap_or(""),
                        call.call_id
                    )?;
                    state.printed = true;
                    state.at_line_start = true;
                    state.item.clone_from(&call.id);
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), ExecError> {
        if !self.json && self.text.printed && !self.text.at_line_start {
            self.stdout.write_all(b"\n").map_err(ExecError::Stdout)?;
        }
        self.stdout.flush().map_err(ExecError::Stdout)?;
        if let Some((path, log)) = &mut self.log {
            log.flush().map_err(|source| ExecError::Log {
                path: path.clone(),
                source,
            })?;
        }
        Ok(())
    }
}

/// Opens a file readable only by its owner (on Unix), for logs that hold conversations.
fn open_private(path: &Path, append: bool) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.create(true);
    if append {
        options.append(true);
    } else {
        options.write(true).truncate(true);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

fn write_private(path: &Path, append: bool, bytes: &[u8]) -> io::Result<()> {
    open_private(path, append)?.write_all(bytes)
}
