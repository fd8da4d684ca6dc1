//! Running one turn: the upstream's bytes read on a worker thread, while the main thread
//! decodes them, watches the idle timeout and answers SIGINT and SIGTERM with a terminal event.

use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use agentwire_exec::{
    ChatStream, Event, Normalizer, Outcome, Request, SseDecoder, SseEvent, UpstreamFailure,
};

use super::{http, trace, Api, Args, ExecError, Output};
use crate::CliError;

/// How often the main thread looks at the cancel flag while it waits for the upstream.
const TICK: Duration = Duration::from_millis(50);

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum End {
    /// The stream's outcome (always set once the stream has ended).
    Outcome(Option<Outcome>),
    /// A signal cancelled the turn (a terminal `response.failed` was emitted).
    Cancelled(i32),
}

/// SIGINT and SIGTERM, caught: the first sets the flag the turn polls, a second one ends the
/// process at once (128 + the signal).
pub(super) struct Cancel {
    signal: Arc<AtomicUsize>,
}

impl Cancel {
    pub(super) fn install() -> std::io::Result<Self> {
        use signal_hook::consts::{SIGINT, SIGTERM};
        use signal_hook::flag;
        let signal = Arc::new(AtomicUsize::new(0));
        let caught = Arc::new(AtomicBool::new(false));
        for sig in [SIGINT, SIGTERM] {
            // Registered first, so that it sees the flag as the previous signal left it.
            flag::register_conditional_shutdown(sig, 128 + sig, Arc::clone(&caught))?;
            flag::register(sig, Arc::clone(&caught))?;
            flag::register_usize(sig, Arc::clone(&signal), sig as usize)?;
        }
        Ok(Cancel { signal })
    }

    /// The signal that cancelled the turn, if one did.
    fn caught(&self) -> Option<i32> {
        match self.signal.load(Ordering::SeqCst) {
            0 => None,
            n => i32::try_from(n).ok(),
        }
    }
}

/// Emits the cancellation: an `error` and `response.failed` with code `cancelled`.
fn cancel(signal: i32, normalizer: &mut Normalizer, output: &mut Output) -> Result<End, CliError> {
    let failure = UpstreamFailure::new(
        "cancelled",
        format!("the turn was cancelled by {}", super::signal_name(signal)),
    );
    let events = normalizer.fail(failure);
    output.emit(&events, normalizer)?;
    Ok(End::Cancelled(signal))
}

pub(super) fn run_mock(
    args: &Args,
    request: &Request,
    cancel_flag: &Cancel,
    output: &mut Output,
) -> Result<End, CliError> {
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
            let events = normalizer.fail(failure);
            output.emit(&events, &mut normalizer)?;
            return Ok(End::Outcome(normalizer.outcome()));
        }
        Err(e) => return Err(CliError::Usage(e.to_string())),
    };
    for event in upstream {
        if let Some(signal) = cancel_flag.caught() {
            return cancel(signal, &mut normalizer, output);
        }
        if args.trace {
            trace(&agentwire_exec::to_string(&event));
        }
        let events = normalizer.push(event);
        output.emit(&events, &mut normalizer)?;
        if normalizer.outcome().is_some() {
            break;
        }
    }
    let events = normalizer.finish();
    output.emit(&events, &mut normalizer)?;
    Ok(End::Outcome(normalizer.outcome()))
}

/// What the worker thread reports.
enum Upstream {
    /// A retry is about to wait this long.
    Retrying(String, Duration),
    /// The request failed before its stream began.
    Failed(UpstreamFailure),
    /// Bytes of the body.
    Bytes(Vec<u8>),
    /// The body ended.
    End,
    /// Reading the body failed.
    ReadError(std::io::Error),
}

/// Sends the request and pumps the body's bytes into a channel of a few chunks (memory stays
/// bounded: the worker waits while the main thread is behind).
fn spawn(endpoint: http::Endpoint, body: String) -> Receiver<Upstream> {
    let (tx, rx) = mpsc::sync_channel(4);
    std::thread::spawn(move || pump(&endpoint, &body, &tx));
    rx
}

fn pump(endpoint: &http::Endpoint, body: &str, tx: &SyncSender<Upstream>) {
    let mut on_retry = |r: http::Retrying<'_>| {
        let notice = format!(
            "{}; retrying in {:.1}s (attempt {} of {})",
            r.failure.message,
            r.delay.as_secs_f64(),
            r.attempt + 1,
            r.attempts
        );
        let _ = tx.send(Upstream::Retrying(notice, r.delay));
    };
    let mut reader = match http::open(endpoint, body, &mut on_retry) {
        Ok(reader) => reader,
        Err(failure) => {
            let _ = tx.send(Upstream::Failed(failure));
            return;
        }
    };
    loop {
        let mut buf = vec![0; 16 * 1024];
        match reader.read(&mut buf) {
            Ok(0) => {
                let _ = tx.send(Upstream::End);
                return;
            }
            Ok(n) => {
                buf.truncate(n);
                if tx.send(Upstream::Bytes(buf)).is_err() {
                    return;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                let _ = tx.send(Upstream::ReadError(e));
                return;
            }
        }
    }
}

/// Turns the upstream's server-sent events into protocol events: Responses events go to the
/// normalizer as they are; Chat Completions chunks are translated first.
struct Decoder {
    sse: SseDecoder,
    chat: Option<ChatStream>,
    trace: bool,
    batch: Vec<SseEvent>,
}

impl Decoder {
    fn events(&mut self, event: &SseEvent, normalizer: &mut Normalizer) -> Vec<Event> {
        if self.trace {
            trace(&event.data);
        }
        match &mut self.chat {
            None => normalizer.push_sse(event),
            Some(chat) => match chat.push_json(&event.data) {
                Ok(upstream) => upstream
                    .into_iter()
                    .flat_map(|e| normalizer.push(e))
                    .collect(),
                Err(failure) => normalizer.fail(failure),
            },
        }
    }

    fn end(&mut self, normalizer: &mut Normalizer) -> Vec<Event> {
        let mut out = Vec::new();
        if let Some(chat) = &mut self.chat {
            for event in chat.finish() {
                out.extend(normalizer.push(event));
            }
            if chat.saw_other_choices() {
                eprintln!(
                    "agentwire: note: the upstream sent several choices; only the first is kept"
                );
            }
        }
        out.extend(normalizer.finish());
        out
    }
}

pub(super) fn run_upstream(
    args: &Args,
    endpoint: &http::Endpoint,
    request: &Request,
    body: &str,
    cancel_flag: &Cancel,
    output: &mut Output,
) -> Result<End, CliError> {
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut normalizer = Normalizer::new(request).created_at(now);
    let mut decoder = Decoder {
        sse: SseDecoder::new().max_event_bytes(args.max_event_bytes),
        chat: (args.api == Api::Chat).then(ChatStream::new),
        trace: args.trace,
        batch: Vec::new(),
    };
    let idle = Duration::from_secs(args.idle_timeout.max(1));
    let rx = spawn(endpoint.clone(), body.to_owned());
    let mut deadline = Instant::now() + idle;
    while normalizer.outcome().is_none() {
        if let Some(signal) = cancel_flag.caught() {
            return cancel(signal, &mut normalizer, output);
        }
        let now = Instant::now();
        if now >= deadline {
            let failure = UpstreamFailure::new(
                "idle_timeout",
                format!(
                    "the upstream sent nothing for {}s (see --idle-timeout)",
                    idle.as_secs()
                ),
            );
            let events = normalizer.fail(failure);
            output.emit(&events, &mut normalizer)?;
            break;
        }
        let message = match rx.recv_timeout(TICK.min(deadline - now)) {
            Ok(message) => message,
            Err(RecvTimeoutError::Timeout) => continue,
            // The worker always reports how it ended; a vanished one ended the body.
            Err(RecvTimeoutError::Disconnected) => Upstream::End,
        };
        deadline = Instant::now() + idle;
        let events = match message {
            Upstream::Retrying(notice, delay) => {
                eprintln!("agentwire: {notice}");
                // Waiting to retry is not the upstream being idle.
                deadline += delay;
                Vec::new()
            }
            Upstream::Failed(failure) => normalizer.fail(failure),
            Upstream::Bytes(bytes) => {
                let fed = decoder.sse.feed(&bytes, &mut decoder.batch);
                let mut events = Vec::new();
                for event in std::mem::take(&mut decoder.batch) {
                    if normalizer.outcome().is_some() {
                        break;
                    }
                    events.extend(decoder.events(&event, &mut normalizer));
                }
                if let Err(e) = fed {
                    events.extend(normalizer.fail(UpstreamFailure::from_read_error(&e)));
                }
                events
            }
            Upstream::End => {
                if let Some(line) = decoder.sse.finish() {
                    eprintln!("agentwire: the upstream body ended inside an event (line {line})");
                }
                decoder.end(&mut normalizer)
            }
            Upstream::ReadError(error) => {
                let failure = if matches!(
                    error
                        .get_ref()
                        .and_then(|inner| inner.downcast_ref::<ureq::Error>()),
                    Some(ureq::Error::Timeout(_))
                ) {
                    // ureq reports its own timeouts as `io::ErrorKind::Other` errors.
                    UpstreamFailure::new(
                        "timeout",
                        format!(
                            "the upstream stream timed out after {}s (see --timeout)",
                            args.timeout.unwrap_or(0).max(1)
                        ),
                    )
                } else {
                    UpstreamFailure::from_read_error(&agentwire_exec::Error::from(error))
                };
                normalizer.fail(failure)
            }
        };
        output
            .emit(&events, &mut normalizer)
            .map_err(|e: ExecError| CliError::from(e))?;
    }
    Ok(End::Outcome(normalizer.outcome()))
}
