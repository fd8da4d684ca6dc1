//! `agentwire exec`: one turn of a model with JSON-Schema tools, streamed as Responses-API
//! events (JSONL), against a provider or an offline mock.

mod http;

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use agentwire_exec::{
    Event, FunctionTool, MockMode, Normalizer, Outcome, OutputItem, Request, RequestOptions,
    RetryPolicy, SseDecoder, SseReader, ToolChoice, ToolSpec, UpstreamFailure,
};
use serde_json::Value;

use crate::{input, CliError};

/// The provider used when neither `--base-url` nor `OPENAI_BASE_URL` is set.
const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

const EXIT_CODES: &str = "\
Exit status: 0 when the response completed (a turn that asks for tool calls completed too);
1 when it failed, was incomplete, or the stream was cut (in --json mode an `error` event and a
final `response.failed` are printed first); 2 for usage errors (bad flags, unreadable or invalid
files given by flags, a missing OPENAI_API_KEY).";

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
    /// A function tool and the file of its arguments' JSON Schema (an object); repeatable.
    #[arg(long = "tool", value_name = "NAME:json=PATH")]
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
    /// The provider's API root; POST {base_url}/responses [default: $OPENAI_BASE_URL, else
    /// https://api.openai.com/v1].
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// Ask the model for at most one tool call per turn.
    #[arg(long)]
    no_parallel_tool_calls: bool,
    /// Retries after HTTP 408, 429 and 5xx answers and failed connections.
    #[arg(long, value_name = "N", default_value_t = 2)]
    max_retries: u32,
    /// The wait before the first retry, doubling each time (a Retry-After header wins).
    #[arg(long, value_name = "MS", default_value_t = 500)]
    retry_backoff_ms: u64,
    /// The longest one attempt may take, streaming included.
    #[arg(long, value_name = "SECONDS", default_value_t = 600)]
    timeout: u64,
    /// The largest upstream event accepted.
    #[arg(long, value_name = "BYTES", default_value_t = agentwire_exec::DEFAULT_MAX_EVENT_BYTES)]
    max_event_bytes: usize,
}

fn parse_tool_choice(s: &str) -> Result<ToolChoice, String> {
    s.parse().map_err(|e: agentwire_exec::Error| e.to_string())
}

fn parse_mock_mode(s: &str) -> Result<MockMode, String> {
    s.parse().map_err(|e: agentwire_exec::Error| e.to_string())
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
    /// Standard output could not be written.
    #[error("cannot write standard output: {0}")]
    Stdout(io::Error),
    /// The response log could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Log { path: PathBuf, source: io::Error },
}

pub(crate) fn run(args: &Args) -> Result<(), CliError> {
    let request = build_request(args)?;
    let endpoint = if args.mock {
        None
    } else {
        Some(endpoint(args)?)
    };
    if let Some(path) = &args.log_requests {
        write_private(
            path,
            false,
            format!("{}\n", request.to_json_pretty()).as_bytes(),
        )
        .map_err(|e| CliError::Usage(format!("cannot write {}: {e}", path.display())))?;
    }
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
    let outcome = match &endpoint {
        None => run_mock(args, &request, &mut output)?,
        Some(endpoint) => run_upstream(args, endpoint, &request, &mut output)?,
    };
    output.finish()?;
    match outcome {
        Some(Outcome::Completed) => Ok(()),
        Some(Outcome::Incomplete) => Err(ExecError::Incomplete(
            output
                .incomplete_reason
                .unwrap_or_else(|| "no reason given".to_owned()),
        )
        .into()),
        _ => Err(ExecError::Failed(
            output
                .first_error
                .unwrap_or_else(|| "no error message".to_owned()),
        )
        .into()),
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
        options
            .tools
            .push(FunctionTool::new(spec.name, schema).map_err(usage)?);
    }
    options.build().map_err(usage)
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
    let api_key = env("OPENAI_API_KEY").ok_or_else(|| {
        CliError::Usage("OPENAI_API_KEY is not set (use --mock to run offline)".to_owned())
    })?;
    let base_url = args
        .base_url
        .clone()
        .or_else(|| env("OPENAI_BASE_URL"))
        .unwrap_or_else(|| DEFAULT_BASE_URL.to_owned());
    if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
        return Err(CliError::Usage(format!(
            "--base-url must start with http:// or https://, found `{base_url}`"
        )));
    }
    Ok(http::Endpoint {
        url: format!("{}/responses", base_url.trim_end_matches('/')),
        api_key,
        organization: env("OPENAI_ORG_ID"),
        project: env("OPENAI_PROJECT_ID"),
        retry: RetryPolicy::new(
            args.max_retries,
            Duration::from_millis(args.retry_backoff_ms),
            Duration::from_secs(30).max(Duration::from_millis(args.retry_backoff_ms)),
        ),
        connect_timeout: Duration::from_secs(30).min(Duration::from_secs(args.timeout.max(1))),
        timeout: Duration::from_secs(args.timeout.max(1)),
    })
}

fn run_mock(
    args: &Args,
    request: &Request,
    output: &mut Output,
) -> Result<Option<Outcome>, CliError> {
    let mut normalizer = Normalizer::new(request);
    // The mock's events are made as they are taken: a normalizer that stops the turn (past its
    // output limit) never pays for the rest.
    let upstream = match args
        .mock_mode
        .stream(request, agentwire_exec::DEFAULT_MAX_OUTPUT_BYTES)
    {
        Ok(upstream) => upstream,
        Err(e) if e.code() == "output_too_large" => {
            let failure = UpstreamFailure::new(
                "output_too_large",
                format!("the mock's answer is too large: {}", e.message()),
            );
            output.emit(&normalizer.fail(failure))?;
            return Ok(normalizer.outcome());
        }
        Err(e) => return Err(CliError::Usage(e.to_string())),
    };
    for event in upstream {
        if args.trace {
            trace(&agentwire_exec::to_string(&event));
        }
        output.emit(&normalizer.push(event))?;
        if normalizer.outcome().is_some() {
            break;
        }
    }
    output.emit(&normalizer.finish())?;
    Ok(normalizer.outcome())
}

fn run_upstream(
    args: &Args,
    endpoint: &http::Endpoint,
    request: &Request,
    output: &mut Output,
) -> Result<Option<Outcome>, CliError> {
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut normalizer = Normalizer::new(request).created_at(now);
    let mut on_retry = |r: http::Retrying<'_>| {
        eprintln!(
            "agentwire: {}; retrying in {:.1}s (attempt {} of {})",
            r.failure.message,
            r.delay.as_secs_f64(),
            r.attempt + 1,
            r.attempts
        );
    };
    let body = match http::open(endpoint, &request.to_json(), &mut on_retry) {
        Ok(body) => body,
        Err(failure) => {
            output.emit(&normalizer.fail(failure))?;
            return Ok(normalizer.outcome());
        }
    };
    let decoder = SseDecoder::new().max_event_bytes(args.max_event_bytes);
    let mut reader = SseReader::with_decoder(body, decoder);
    while normalizer.outcome().is_none() {
        match reader.next_event() {
            Ok(Some(event)) => {
                if args.trace {
                    trace(&event.data);
                }
                output.emit(&normalizer.push_sse(&event))?;
            }
            Ok(None) => {
                if let Some(line) = reader.open_event_at_end() {
                    eprintln!("agentwire: the upstream body ended inside an event (line {line})");
                }
                output.emit(&normalizer.finish())?;
            }
            Err(e) => {
                let failure = match e.kind() {
                    // ureq reports its own timeouts as `io::ErrorKind::Other` errors.
                    agentwire_exec::ErrorKind::Io(io)
                        if matches!(
                            io.get_ref()
                                .and_then(|inner| inner.downcast_ref::<ureq::Error>()),
                            Some(ureq::Error::Timeout(_))
                        ) =>
                    {
                        UpstreamFailure::new(
                            "timeout",
                            format!(
                                "the upstream stream timed out after {}s (see --timeout)",
                                args.timeout.max(1)
                            ),
                        )
                    }
                    _ => UpstreamFailure::from_read_error(&e),
                };
                output.emit(&normalizer.fail(failure))?;
            }
        }
    }
    Ok(normalizer.outcome())
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
    fn emit(&mut self, events: &[Event]) -> Result<(), ExecError> {
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
