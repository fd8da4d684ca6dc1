//! One upstream MCP server, spoken to at the message level.
//!
//! An [`Upstream`] owns a link (a child process over stdio, or streamable HTTP) and a pump
//! task that reads the server's messages **in order**: a notification is handed on (and its
//! delivery awaited) before any later message is looked at, so a progress notification always
//! reaches the client before the result it precedes. Requests get fresh ids; results stay raw
//! JSON, so members the SDK's model does not know pass through untouched.
//!
//! The upstream never initializes itself: the routing layer sends whatever `initialize` it
//! wants (the client's own, in passthrough). When the server exits, closes the link, breaks
//! the protocol or stops answering, every pending request fails with that reason at once and
//! [`Upstream::failed`] resolves.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use futures::future::BoxFuture;
use futures::stream::{FuturesUnordered, StreamExt};
use rmcp::model::{
    CancelledNotificationParam, ClientJsonRpcMessage, ClientNotification, ClientRequest,
    ClientResult, CustomNotification, ErrorCode, ErrorData, JsonRpcMessage, NumberOrString,
    PingRequest, RequestId, ServerRequest,
};
use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::config::{Endpoint, ServerSpec};
use crate::error::{Error, ErrorKind};
use crate::jsonrpc::{self, Line, LineReader, Parsed};

/// A message from the server, with results and notifications kept as raw JSON (a typed
/// notification would come out changed: rmcp's progress is a float, `1` becomes `1.0`).
pub(crate) type Inbound = JsonRpcMessage<ServerRequest, Value, CustomNotification>;

/// Longest message accepted from an upstream over stdio.
const MAX_UPSTREAM_MESSAGE: usize = 64 << 20;

/// How long a child gets to exit after its stdin closes, and again after SIGTERM.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// Why an upstream can no longer serve.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Failure {
    /// It could not be started.
    Spawn(String),
    /// It exited or closed its connection; the text says how.
    Exited(String),
    /// It stopped answering.
    Timeout(Duration),
    /// It broke the protocol beyond recovery.
    Protocol(String),
    /// It was shut down by the proxy.
    Shutdown,
}

impl Failure {
    /// Whether the proxy ended it on purpose.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn is_shutdown(&self) -> bool {
        *self == Failure::Shutdown
    }

    /// The failure as the crate's error.
    pub(crate) fn to_error(&self, upstream: &str, spec: &ServerSpec) -> Error {
        match self {
            Failure::Spawn(message) => Error::new(ErrorKind::Spawn {
                command: spec.to_string(),
                source: std::io::Error::other(message.clone()),
            }),
            Failure::Exited(reason) => Error::new(ErrorKind::UpstreamExited {
                upstream: upstream.to_owned(),
                reason: reason.clone(),
            }),
            Failure::Shutdown => Error::new(ErrorKind::UpstreamExited {
                upstream: upstream.to_owned(),
                reason: "was shut down by the proxy".into(),
            }),
            Failure::Timeout(after) => Error::new(ErrorKind::UpstreamTimeout {
                upstream: upstream.to_owned(),
                seconds: after.as_secs_f64(),
            }),
            Failure::Protocol(message) => Error::new(ErrorKind::UpstreamProtocol {
                upstream: upstream.to_owned(),
                message: message.clone(),
            }),
        }
    }

    /// The JSON-RPC error a pending request gets: internal error (-32603), the message
    /// naming the upstream and the reason, and `data` with both.
    pub(crate) fn to_error_data(&self, upstream: &str) -> ErrorData {
        let reason = match self {
            Failure::Spawn(message) => format!("could not be started: {message}"),
            Failure::Exited(reason) => reason.clone(),
            Failure::Timeout(after) => format!(
                "stopped answering (no message and no answer to a ping for {} s)",
                after.as_secs_f64()
            ),
            Failure::Protocol(message) => format!("broke the protocol: {message}"),
            Failure::Shutdown => "was shut down by the proxy".to_owned(),
        };
        ErrorData::new(
            ErrorCode::INTERNAL_ERROR,
            format!("upstream MCP server `{upstream}` {reason}"),
            Some(json!({"upstream": upstream, "reason": reason})),
        )
    }
}

/// How a request to the upstream ended, when not with a result.
#[derive(Debug)]
pub(crate) enum CallError {
    /// The server answered with a JSON-RPC error (passed on as it is).
    Rpc(ErrorData),
    /// The upstream is gone.
    Gone(Failure),
}

/// A cancellation with its optional reason.
#[derive(Debug, Clone, Default)]
pub(crate) struct Cancellation {
    token: CancellationToken,
    reason: Arc<OnceLock<Option<String>>>,
}

impl Cancellation {
    pub(crate) fn cancel(&self, reason: Option<String>) {
        let _ = self.reason.set(reason);
        self.token.cancel();
    }

    pub(crate) async fn cancelled(&self) -> Option<String> {
        self.token.cancelled().await;
        self.reason.get().cloned().flatten()
    }
}

/// Where the messages a server starts go: its notifications and its requests to the client.
pub(crate) trait UpstreamEvents: Send + Sync + 'static {
    /// A notification from the server, in order; the pump waits for it to be handed on.
    fn notification(&self, notification: CustomNotification) -> BoxFuture<'_, ()>;
    /// A request from the server (sampling, elicitation, roots, ping); `cancel` fires when the
    /// server cancels it.
    fn request(
        &self,
        request: ServerRequest,
        cancel: Cancellation,
    ) -> BoxFuture<'_, Result<ClientResult, ErrorData>>;
}

enum Command {
    Send {
        message: Box<ClientJsonRpcMessage>,
        /// The request this message is, so that a failed send fails it.
        request: Option<RequestId>,
    },
    Shutdown(oneshot::Sender<()>),
}

struct Shared {
    name: String,
    commands: mpsc::UnboundedSender<Command>,
    pending: Mutex<HashMap<RequestId, oneshot::Sender<Result<Value, CallError>>>>,
    server_requests: Mutex<HashMap<RequestId, Cancellation>>,
    next_id: AtomicI64,
    failure: watch::Sender<Option<Failure>>,
}

impl Shared {
    /// Marks the upstream gone (the first reason wins) and fails every pending request, the
    /// requests first: whoever watches for the failure finds their answers already there.
    fn fail(&self, failure: Failure) {
        let failure = self.failure.borrow().clone().unwrap_or(failure);
        let pending: Vec<_> = lock(&self.pending).drain().collect();
        for (_, responder) in pending {
            let _ = responder.send(Err(CallError::Gone(failure.clone())));
        }
        for (_, cancel) in lock(&self.server_requests).drain() {
            cancel.cancel(Some("the upstream server is gone".into()));
        }
        self.failure.send_if_modified(|current| {
            if current.is_none() {
                *current = Some(failure);
                true
            } else {
                false
            }
        });
    }

    fn send(&self, message: ClientJsonRpcMessage, request: Option<RequestId>) {
        let _ = self.commands.send(Command::Send {
            message: Box::new(message),
            request,
        });
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// A connection to one upstream server. Cloning shares it.
#[derive(Clone)]
pub(crate) struct Upstream {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upstream")
            .field("name", &self.shared.name)
            .finish_non_exhaustive()
    }
}

/// A request sent upstream, waiting for its answer. Dropping it forgets the request.
pub(crate) struct PendingCall {
    id: RequestId,
    rx: oneshot::Receiver<Result<Value, CallError>>,
    shared: Arc<Shared>,
}

impl PendingCall {
    /// The request's id on the upstream link.
    pub(crate) fn id(&self) -> &RequestId {
        &self.id
    }

    /// The answer.
    pub(crate) async fn response(mut self) -> Result<Value, CallError> {
        let rx = &mut self.rx;
        match rx.await {
            Ok(result) => result,
            Err(_) => Err(CallError::Gone(
                self.shared
                    .failure
                    .borrow()
                    .clone()
                    .unwrap_or_else(|| Failure::Exited("closed".into())),
            )),
        }
    }
}

impl Drop for PendingCall {
    fn drop(&mut self) {
        lock(&self.shared.pending).remove(&self.id);
    }
}

impl Upstream {
    /// Starts the server (spawns the command, or prepares the HTTP link) and its pump. A
    /// command that cannot be spawned gives an upstream that is already failed, so that the
    /// routing layer answers the client's requests with the reason.
    pub(crate) fn start(
        spec: &ServerSpec,
        events: Arc<dyn UpstreamEvents>,
        timeout: Duration,
    ) -> Upstream {
        let (commands, commands_rx) = mpsc::unbounded_channel();
        let (failure, _) = watch::channel(None);
        let shared = Arc::new(Shared {
            name: spec.name.clone(),
            commands,
            pending: Mutex::default(),
            server_requests: Mutex::default(),
            next_id: AtomicI64::new(1),
            failure,
        });
        match Link::open(spec) {
            Ok(link) => {
                tokio::spawn(pump(link, shared.clone(), events, commands_rx, timeout));
            }
            Err(message) => shared.fail(Failure::Spawn(message)),
        }
        Upstream { shared }
    }

    /// The upstream's name.
    pub(crate) fn name(&self) -> &str {
        &self.shared.name
    }

    /// Why it is gone, when it is.
    pub(crate) fn failure(&self) -> Option<Failure> {
        self.shared.failure.borrow().clone()
    }

    /// Resolves when the upstream is gone.
    pub(crate) async fn failed(&self) -> Failure {
        let mut rx = self.shared.failure.subscribe();
        loop {
            if let Some(failure) = rx.borrow_and_update().clone() {
                return failure;
            }
            if rx.changed().await.is_err() {
                return Failure::Exited("closed".into());
            }
        }
    }

    /// Sends a request; the answer comes from the returned call.
    pub(crate) fn send_request(&self, request: ClientRequest) -> Result<PendingCall, CallError> {
        if let Some(failure) = self.failure() {
            return Err(CallError::Gone(failure));
        }
        let id = NumberOrString::Number(self.shared.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        lock(&self.shared.pending).insert(id.clone(), tx);
        // The upstream may have failed between the check and the insert: `fail` drained the
        // map before, so look again.
        if let Some(failure) = self.failure() {
            lock(&self.shared.pending).remove(&id);
            return Err(CallError::Gone(failure));
        }
        self.shared.send(
            ClientJsonRpcMessage::request(request, id.clone()),
            Some(id.clone()),
        );
        Ok(PendingCall {
            id,
            rx,
            shared: self.shared.clone(),
        })
    }

    /// Sends a notification (dropped when the upstream is gone).
    pub(crate) fn notify(&self, notification: ClientNotification) {
        if self.failure().is_none() {
            self.shared
                .send(ClientJsonRpcMessage::notification(notification), None);
        }
    }

    /// Tells the server that request `id` is cancelled.
    pub(crate) fn cancel(&self, id: RequestId, reason: Option<String>) {
        let params = CancelledNotificationParam::new(Some(id), reason);
        self.notify(ClientNotification::CancelledNotification(
            rmcp::model::CancelledNotification::new(params),
        ));
    }

    /// Asks the pump to end the upstream, without waiting.
    pub(crate) fn shutdown_in_background(&self) {
        let (done, _) = oneshot::channel();
        let _ = self.shared.commands.send(Command::Shutdown(done));
    }

    /// Ends the upstream: closes the child's stdin, waits for it to exit, then SIGTERM and
    /// SIGKILL to its process group if it does not (the MCP stdio shutdown sequence); closes an
    /// HTTP session. Pending requests fail.
    pub(crate) async fn shutdown(&self) {
        let (done, wait) = oneshot::channel();
        if self.shared.commands.send(Command::Shutdown(done)).is_ok() {
            let _ = wait.await;
        }
    }
}

/// A message being written, with the request it is (if one), and how the write went.
type Sending = BoxFuture<'static, (Option<RequestId>, Result<(), String>)>;

/// The pump: reads the server's messages in order, writes the proxy's, watches liveness.
async fn pump(
    mut link: Link,
    shared: Arc<Shared>,
    events: Arc<dyn UpstreamEvents>,
    mut commands: mpsc::UnboundedReceiver<Command>,
    timeout: Duration,
) {
    let mut sends: FuturesUnordered<Sending> = FuturesUnordered::new();
    let mut last_heard = Instant::now();
    let mut probe: Option<Instant> = None;
    let mut shutdown_done = None;
    let failure = loop {
        let busy = !lock(&shared.pending).is_empty();
        let deadline = match probe {
            Some(sent) => sent + timeout,
            None => last_heard + timeout,
        };
        tokio::select! {
            command = commands.recv() => match command {
                Some(Command::Send { message, request }) => {
                    if request.is_some() && !busy {
                        // Silence only counts while something waits.
                        last_heard = Instant::now();
                    }
                    let send = link.send(*message);
                    sends.push(Box::pin(async move { (request, send.await) }));
                }
                Some(Command::Shutdown(done)) => {
                    shutdown_done = Some(done);
                    break None;
                }
                None => break None,
            },
            Some((request, result)) = sends.next(), if !sends.is_empty() => {
                if let (Some(id), Err(message)) = (request, result) {
                    if let Some(responder) = lock(&shared.pending).remove(&id) {
                        let _ = responder.send(Err(CallError::Gone(Failure::Exited(format!(
                            "could not be sent the request: {message}"
                        )))));
                    }
                }
            }
            received = link.receive() => {
                last_heard = Instant::now();
                probe = None;
                match received {
                    Received::Parsed(parsed) => {
                        if let Some(failure) = dispatch(*parsed, &shared, &events).await {
                            break Some(failure);
                        }
                    }
                    Received::Closed(reason) => break Some(Failure::Exited(reason)),
                    Received::Fatal(message) => break Some(Failure::Protocol(message)),
                }
            }
            () = tokio::time::sleep_until(deadline), if busy => {
                if probe.is_some() {
                    break Some(Failure::Timeout(timeout));
                }
                // Silent while requests wait: ask whether it is still there. Any message
                // counts as an answer; the ping's own response has an id nobody waits for.
                probe = Some(Instant::now());
                let id = NumberOrString::String(
                    format!("agentwire-ping-{}", shared.next_id.fetch_add(1, Ordering::Relaxed)).into(),
                );
                let ping = ClientRequest::PingRequest(PingRequest::default());
                let send = link.send(ClientJsonRpcMessage::request(ping, id));
                sends.push(Box::pin(async move { (None, send.await) }));
            }
        }
    };
    match failure {
        Some(failure) => {
            shared.fail(failure);
            link.close().await;
        }
        None => {
            link.close().await;
            // Whatever it said while closing, it is gone now.
            shared.fail(Failure::Shutdown);
        }
    }
    if let Some(done) = shutdown_done {
        let _ = done.send(());
    }
}

/// Handles one message from the server; returns a failure that ends the upstream.
async fn dispatch(
    parsed: Parsed<Inbound>,
    shared: &Arc<Shared>,
    events: &Arc<dyn UpstreamEvents>,
) -> Option<Failure> {
    match parsed {
        Parsed::Message(JsonRpcMessage::Response(response)) => {
            if let Some(responder) = lock(&shared.pending).remove(&response.id) {
                let _ = responder.send(Ok(response.result));
            }
        }
        Parsed::Message(JsonRpcMessage::Error(error)) => match error.id {
            Some(id) => {
                if let Some(responder) = lock(&shared.pending).remove(&id) {
                    let _ = responder.send(Err(CallError::Rpc(error.error)));
                }
            }
            None => {
                tracing::warn!(upstream = %shared.name, error = ?error.error, "error without an id");
            }
        },
        Parsed::Message(JsonRpcMessage::Notification(notification)) => {
            let notification = notification.notification;
            if notification.method == "notifications/cancelled" {
                // The server cancels one of its own requests to the client.
                let params = notification.params.as_ref().and_then(|p| {
                    serde_json::from_value::<CancelledNotificationParam>(p.clone()).ok()
                });
                if let Some(params) = params {
                    if let Some(id) = &params.request_id {
                        if let Some(cancel) = lock(&shared.server_requests).remove(id) {
                            cancel.cancel(params.reason);
                        }
                    }
                }
                return None;
            }
            events.notification(notification).await;
        }
        Parsed::Message(JsonRpcMessage::Request(request)) => {
            let id = request.id;
            let cancel = Cancellation::default();
            lock(&shared.server_requests).insert(id.clone(), cancel.clone());
            let (shared, events) = (shared.clone(), events.clone());
            tokio::spawn(async move {
                let result = tokio::select! {
                    result = events.request(request.request, cancel.clone()) => result,
                    // A cancelled request gets no answer.
                    _ = cancel.cancelled() => return,
                };
                if lock(&shared.server_requests).remove(&id).is_none() {
                    return;
                }
                let message = match result {
                    Ok(result) => ClientJsonRpcMessage::response(result, id),
                    Err(error) => ClientJsonRpcMessage::error(error, Some(id)),
                };
                shared.send(message, None);
            });
        }
        Parsed::Reply(error, id) => {
            shared.send(ClientJsonRpcMessage::error(error, id), None);
        }
        Parsed::BadResponse(id, error) => {
            if let Some(responder) = lock(&shared.pending).remove(&id) {
                let _ = responder.send(Err(CallError::Rpc(error)));
            }
        }
        Parsed::Ignore(reason) => {
            tracing::debug!(upstream = %shared.name, %reason, "ignored a message");
        }
    }
    None
}

/// What a link delivers.
enum Received {
    Parsed(Box<Parsed<Inbound>>),
    /// The server is gone; how.
    Closed(String),
    /// The server broke the protocol beyond recovery.
    Fatal(String),
}

enum Link {
    Child(ChildLink),
    #[cfg(feature = "http")]
    Http(Box<http::HttpLink>),
}

impl Link {
    fn open(spec: &ServerSpec) -> Result<Link, String> {
        match &spec.endpoint {
            Endpoint::Command { command, args, env } => {
                ChildLink::spawn(command, args, env).map(Link::Child)
            }
            #[cfg(feature = "http")]
            Endpoint::Url(url) => Ok(Link::Http(Box::new(http::HttpLink::new(url)))),
            #[cfg(not(feature = "http"))]
            Endpoint::Url(_) => {
                Err("streamable HTTP needs the `http` feature of agentwire-mcp".into())
            }
        }
    }

    #[cfg_attr(not(feature = "http"), allow(clippy::needless_pass_by_value))]
    fn send(&mut self, message: ClientJsonRpcMessage) -> BoxFuture<'static, Result<(), String>> {
        match self {
            Link::Child(child) => child.send(&message),
            #[cfg(feature = "http")]
            Link::Http(http) => http.send(message),
        }
    }

    async fn receive(&mut self) -> Received {
        match self {
            Link::Child(child) => child.receive().await,
            #[cfg(feature = "http")]
            Link::Http(http) => http.receive().await,
        }
    }

    async fn close(&mut self) {
        match self {
            Link::Child(child) => child.close().await,
            #[cfg(feature = "http")]
            Link::Http(http) => http.close().await,
        }
    }
}

/// A server run as a child process in its own process group, stdin and stdout piped, stderr
/// shared with the proxy.
struct ChildLink {
    child: Box<dyn process_wrap::tokio::ChildWrapper>,
    writer: Option<mpsc::UnboundedSender<Vec<u8>>>,
    reader: LineReader<tokio::io::BufReader<tokio::process::ChildStdout>>,
}

impl ChildLink {
    fn spawn(
        command: &str,
        args: &[String],
        env: &std::collections::BTreeMap<String, String>,
    ) -> Result<ChildLink, String> {
        use process_wrap::tokio::{CommandWrap, KillOnDrop, ProcessGroup};

        let mut wrap = CommandWrap::with_new(command, |c| {
            c.args(args)
                .envs(env)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit());
        });
        wrap.wrap(ProcessGroup::leader()).wrap(KillOnDrop);
        let mut child = wrap.spawn().map_err(|e| e.to_string())?;
        let stdin = child.stdin().take().ok_or("no stdin")?;
        let stdout = child.stdout().take().ok_or("no stdout")?;
        let (writer, mut lines) = mpsc::unbounded_channel::<Vec<u8>>();
        // One writer task keeps the lines in the order they were sent; it ends (closing the
        // child's stdin) when the link closes or a write fails.
        tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            let mut stdin = stdin;
            while let Some(line) = lines.recv().await {
                if stdin.write_all(&line).await.is_err() || stdin.flush().await.is_err() {
                    break;
                }
            }
        });
        Ok(ChildLink {
            child,
            writer: Some(writer),
            reader: LineReader::new(
                tokio::io::BufReader::with_capacity(1 << 16, stdout),
                MAX_UPSTREAM_MESSAGE,
            ),
        })
    }

    fn send(&mut self, message: &ClientJsonRpcMessage) -> BoxFuture<'static, Result<(), String>> {
        let queued = match (jsonrpc::message_line(message), &self.writer) {
            (Ok(line), Some(writer)) => writer
                .send(line)
                .map_err(|_| "the server's stdin is closed".to_owned()),
            (Err(e), _) => Err(e.to_string()),
            (_, None) => Err("the server's stdin is closed".to_owned()),
        };
        Box::pin(async move { queued })
    }

    async fn receive(&mut self) -> Received {
        match self.reader.next().await {
            Line::Whole => Received::Parsed(Box::new(jsonrpc::parse(self.reader.line()))),
            Line::Oversized => Received::Fatal(format!(
                "sent a message over {} MiB",
                MAX_UPSTREAM_MESSAGE >> 20
            )),
            Line::Eof => Received::Closed(self.exit_reason().await),
            Line::Io(e) => Received::Closed(format!("could not be read from: {e}")),
        }
    }

    /// How the child ended, once its output closed.
    async fn exit_reason(&mut self) -> String {
        match tokio::time::timeout(EXIT_GRACE, self.child.wait()).await {
            Ok(Ok(status)) => describe_exit(status),
            Ok(Err(e)) => format!("closed its output (cannot wait for it: {e})"),
            Err(_) => "closed its output".to_owned(),
        }
    }

    async fn close(&mut self) {
        // Closing stdin asks the server to exit.
        self.writer = None;
        if tokio::time::timeout(EXIT_GRACE, self.child.wait())
            .await
            .is_ok()
        {
            return;
        }
        #[cfg(unix)]
        if self.child.signal(libc::SIGTERM).is_ok()
            && tokio::time::timeout(EXIT_GRACE, self.child.wait())
                .await
                .is_ok()
        {
            return;
        }
        let _ = Box::into_pin(self.child.kill()).await;
    }
}

fn describe_exit(status: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("was killed by signal {signal}");
        }
    }
    match status.code() {
        Some(code) => format!("exited with status {code}"),
        None => format!("exited ({status})"),
    }
}

#[cfg(feature = "http")]
mod http {
    //! A streamable-HTTP server through rmcp's client transport.

    use futures::future::BoxFuture;
    use rmcp::model::{
        ClientJsonRpcMessage, CustomNotification, JsonRpcMessage, ServerJsonRpcMessage,
    };
    use rmcp::transport::{StreamableHttpClientTransport, Transport};
    use rmcp::RoleClient;

    use super::{Parsed, Received};

    pub(super) struct HttpLink {
        transport: StreamableHttpClientTransport<reqwest::Client>,
    }

    impl HttpLink {
        pub(super) fn new(url: &str) -> HttpLink {
            // reqwest is built without a default TLS provider (see Cargo.toml): use ring, the
            // one already in the tree, unless the program installed its own.
            let _ = rustls::crypto::ring::default_provider().install_default();
            HttpLink {
                transport: StreamableHttpClientTransport::from_uri(url),
            }
        }

        pub(super) fn send(
            &mut self,
            message: ClientJsonRpcMessage,
        ) -> BoxFuture<'static, Result<(), String>> {
            let send = Transport::<RoleClient>::send(&mut self.transport, message);
            Box::pin(async move { send.await.map_err(|e| e.to_string()) })
        }

        pub(super) async fn receive(&mut self) -> Received {
            let Some(message) = Transport::<RoleClient>::receive(&mut self.transport).await else {
                return Received::Closed("closed the HTTP connection".into());
            };
            Received::Parsed(Box::new(Parsed::Message(match message {
                ServerJsonRpcMessage::Request(request) => JsonRpcMessage::Request(request),
                ServerJsonRpcMessage::Notification(n) => {
                    let raw = serde_json::to_value(&n.notification)
                        .and_then(serde_json::from_value::<CustomNotification>);
                    match raw {
                        Ok(notification) => JsonRpcMessage::notification(notification),
                        Err(e) => {
                            return Received::Parsed(Box::new(Parsed::Ignore(format!(
                                "a notification rmcp read but cannot write: {e}"
                            ))))
                        }
                    }
                }
                ServerJsonRpcMessage::Error(e) => JsonRpcMessage::Error(e),
                ServerJsonRpcMessage::Response(response) => {
                    match serde_json::to_value(&response.result) {
                        Ok(result) => JsonRpcMessage::response(result, response.id),
                        Err(e) => JsonRpcMessage::error(
                            rmcp::model::ErrorData::internal_error(
                                format!("malformed response: {e}"),
                                None,
                            ),
                            Some(response.id),
                        ),
                    }
                }
            })))
        }

        pub(super) async fn close(&mut self) {
            let _ = Transport::<RoleClient>::close(&mut self.transport).await;
        }
    }
}
