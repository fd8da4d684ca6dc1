//! The routing layer: what the proxy does with one client session's messages.
//!
//! [`ProxyService`] is the rmcp server side of a session, on any transport; it hands every
//! request and notification to a [`Route`]. [`Passthrough`] is the route of this crate: one
//! upstream, everything forwarded unchanged both ways, tool results re-encoded. Catalog modes
//! (a proxy or gateway over several upstreams, with tools of their own) are further routes
//! over the same [`Upstream`] and service.

use std::borrow::Cow;
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use futures::future::BoxFuture;
use rmcp::model::{
    CallToolRequest, CancelledNotificationParam, ClientNotification, ClientRequest, ClientResult,
    CustomNotification, CustomResult, ErrorCode, ErrorData, GetExtensions, GetMeta,
    InitializeResult, ProgressToken, ProtocolVersion, RequestId, ServerNotification, ServerRequest,
    ServerResult,
};
use rmcp::service::{
    NotificationContext, OriginatingRequestId, PeerRequestOptions, RequestContext, RoleServer,
    Service, ServiceError,
};
use rmcp::Peer;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::config::ServerSpec;
use crate::encoding::{Outcome, Reencoder};
use crate::error::Error;
use crate::stats::{CallRecord, CallStatus, Stats};
use crate::upstream::{CallError, Cancellation, Failure, Upstream, UpstreamEvents};

/// One client request as a route sees it.
pub(crate) struct Call {
    /// The request's id on the client's side.
    pub(crate) id: RequestId,
    /// Fires when the client cancels the request or the session ends.
    pub(crate) cancel: CancellationToken,
    /// The client.
    pub(crate) peer: Peer<RoleServer>,
}

impl Call {
    /// The call of `request`, given to the handler with `context`: rmcp moved the request's
    /// `_meta` (progress token included) into the context, and it goes back into the request
    /// so that it is forwarded (an empty one stays out: it would add `"_meta": {}`).
    pub(crate) fn new(request: &mut ClientRequest, context: RequestContext<RoleServer>) -> Call {
        if !context.meta.is_empty() {
            *request.get_meta_mut() = context.meta;
        }
        Call {
            id: context.id,
            cancel: context.ct,
            peer: context.peer,
        }
    }
}

/// What a session does with the client's messages.
pub(crate) trait Route: Send + Sync + 'static {
    /// Answers a request.
    fn request(
        &self,
        request: ClientRequest,
        call: Call,
    ) -> impl Future<Output = Result<ServerResult, ErrorData>> + Send + '_;

    /// Takes a notification.
    fn notification(
        &self,
        notification: ClientNotification,
        peer: Peer<RoleServer>,
    ) -> impl Future<Output = ()> + Send + '_;

    /// The server information of the session (after `initialize`, the upstream's).
    fn info(&self) -> InitializeResult;

    /// The protocol versions `initialize` may agree to.
    fn protocol_versions(&self) -> Cow<'static, [ProtocolVersion]>;

    /// Resolves when the route can no longer serve, with the reason.
    fn failed(&self) -> impl Future<Output = Error> + Send + '_;

    /// Why the route can no longer serve, if it cannot.
    fn failure(&self) -> Option<Error>;

    /// Ends the route's upstreams.
    fn shutdown(&self) -> impl Future<Output = ()> + Send + '_;

    /// Fails every request still waiting, now: the client is gone.
    fn client_gone(&self);
}

/// The rmcp server side of a session, handing everything to its route.
pub(crate) struct ProxyService<R>(pub(crate) Arc<R>);

impl<R: Route> Service<RoleServer> for ProxyService<R> {
    async fn handle_request(
        &self,
        mut request: ClientRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        let call = Call::new(&mut request, context);
        self.0.request(request, call).await
    }

    async fn handle_notification(
        &self,
        mut notification: ClientNotification,
        context: NotificationContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if !context.meta.is_empty() {
            *notification.get_meta_mut() = context.meta;
        }
        self.0.notification(notification, context.peer).await;
        Ok(())
    }

    fn get_info(&self) -> InitializeResult {
        self.0.info()
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.0.protocol_versions()
    }
}

/// Everything a route shares with its upstreams' pumps: the client to hand the servers'
/// messages to.
pub(crate) struct Downstream {
    peer: OnceLock<Peer<RoleServer>>,
    /// Whether notifications must go typed (rmcp's HTTP server routes progress by its typed
    /// form); over stdio they go raw, exactly as the server wrote them.
    typed: bool,
    /// Whether the session is past `initialize`: until then rmcp writes nothing but the
    /// handshake, so a notification cannot be waited for (the server's `initialize` result,
    /// behind it in the pump, would never come).
    ready: std::sync::atomic::AtomicBool,
    /// Progress tokens rmcp minted for requests forwarded to the client, mapped back to the
    /// server's own (rmcp gives every outgoing request a token of its own).
    progress: Mutex<HashMap<ProgressToken, Option<ProgressToken>>>,
    /// Client requests in flight: their id on the client's side, and on the upstream's.
    inflight: Mutex<HashMap<RequestId, RequestId>>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl Downstream {
    /// No client yet; `typed` when notifications must go through rmcp's typed model (HTTP).
    pub(crate) fn new(typed: bool) -> Downstream {
        Downstream {
            peer: OnceLock::new(),
            typed,
            ready: Default::default(),
            progress: Mutex::default(),
            inflight: Mutex::default(),
        }
    }

    /// The client, from the first message it sends.
    pub(crate) fn set_peer(&self, peer: &Peer<RoleServer>) {
        let _ = self.peer.set(peer.clone());
    }

    /// The session is past `initialize`: notifications can be awaited.
    pub(crate) fn mark_ready(&self) {
        self.ready.store(true, std::sync::atomic::Ordering::Release);
    }
}

fn service_error(error: ServiceError) -> ErrorData {
    match error {
        ServiceError::McpError(error) => error,
        other => ErrorData::internal_error(format!("the client did not answer: {other}"), None),
    }
}

impl UpstreamEvents for Downstream {
    fn notification(&self, notification: CustomNotification) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let notification = if self.typed {
                serde_json::to_value(&notification)
                    .and_then(serde_json::from_value::<ServerNotification>)
                    .unwrap_or(ServerNotification::CustomNotification(notification))
            } else {
                ServerNotification::CustomNotification(notification)
            };
            let Some(peer) = self.peer.get() else {
                tracing::debug!("a notification before initialize was dropped");
                return;
            };
            let send = {
                let peer = peer.clone();
                async move {
                    if let Err(e) = peer.send_notification(notification).await {
                        tracing::debug!(error = %e, "could not forward a notification");
                    }
                }
            };
            if self.ready.load(std::sync::atomic::Ordering::Acquire) {
                // Written before the pump looks at the next message: order is kept.
                send.await;
            } else {
                // Goes out right after the handshake.
                tokio::spawn(send);
            }
        })
    }

    fn request(
        &self,
        mut request: ServerRequest,
        cancel: Cancellation,
    ) -> BoxFuture<'_, Result<ClientResult, ErrorData>> {
        Box::pin(async move {
            let Some(peer) = self.peer.get() else {
                return Err(ErrorData::internal_error(
                    "no client is connected to the proxy yet",
                    None,
                ));
            };
            // Over streamable HTTP a request to the client travels on the stream of the client
            // request it belongs to; with one in flight, that is the one.
            if let Some(origin) = single(&lock(&self.inflight)) {
                request
                    .extensions_mut()
                    .insert(OriginatingRequestId(origin));
            }
            let token = request.get_meta().get_progress_token();
            let handle = peer
                .send_cancellable_request(request, PeerRequestOptions::no_options())
                .await
                .map_err(service_error)?;
            let minted = handle.progress_token.clone();
            lock(&self.progress).insert(minted.clone(), token);
            let (id, peer) = (handle.id.clone(), handle.peer.clone());
            let result = tokio::select! {
                result = handle.await_response() => result.map_err(service_error),
                reason = cancel.cancelled() => {
                    let params = CancelledNotificationParam::new(Some(id), reason);
                    let _ = peer
                        .send_notification(ServerNotification::CancelledNotification(
                            rmcp::model::CancelledNotification::new(params),
                        ))
                        .await;
                    Err(ErrorData::internal_error("cancelled by the server", None))
                }
            };
            lock(&self.progress).remove(&minted);
            result
        })
    }
}

fn single(inflight: &HashMap<RequestId, RequestId>) -> Option<RequestId> {
    let mut ids = inflight.keys();
    match (ids.next(), ids.next()) {
        (Some(id), None) => Some(id.clone()),
        _ => None,
    }
}

/// The `initialize` exchange as JSON, for a transport that can carry it raw (stdio): rmcp's
/// typed model of it drops members it does not know (a server's `tasks` capability, say), and
/// the handshake must go through that model.
#[derive(Debug, Default)]
pub(crate) struct RawInitialize {
    /// The client's `initialize` params, put here by the transport.
    pub(crate) request: Mutex<Option<Value>>,
    /// The server's `initialize` result, put here by the route.
    pub(crate) result: Mutex<Option<Value>>,
}

/// One upstream, everything forwarded unchanged, tool results re-encoded.
pub(crate) struct Passthrough {
    spec: ServerSpec,
    upstream: Upstream,
    downstream: Arc<Downstream>,
    reencoder: Arc<Reencoder>,
    stats: Arc<Stats>,
    initialized: Mutex<Option<InitializeResult>>,
    raw: Arc<RawInitialize>,
    client_gone: CancellationToken,
}

impl Passthrough {
    /// Starts the upstream of `spec`.
    pub(crate) fn start(
        spec: ServerSpec,
        reencoder: Arc<Reencoder>,
        stats: Arc<Stats>,
        timeout: std::time::Duration,
        raw: Option<Arc<RawInitialize>>,
    ) -> Passthrough {
        let downstream = Arc::new(Downstream::new(raw.is_none()));
        let upstream = Upstream::start(&spec, downstream.clone(), timeout);
        Passthrough {
            spec,
            upstream,
            downstream,
            reencoder,
            stats,
            initialized: Mutex::default(),
            raw: raw.unwrap_or_default(),
            client_gone: CancellationToken::new(),
        }
    }

    /// The upstream.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn upstream(&self) -> &Upstream {
        &self.upstream
    }

    fn gone(&self, failure: &Failure) -> ErrorData {
        failure.to_error_data(self.upstream.name())
    }

    /// Forwards a request and waits for the server's raw result, forwarding a cancellation.
    async fn forward(&self, request: ClientRequest, call: &Call) -> Result<Value, ErrorData> {
        let pending = self.upstream.send_request(request).map_err(|e| match e {
            CallError::Rpc(error) => error,
            CallError::Gone(failure) => self.gone(&failure),
        })?;
        let upstream_id = pending.id().clone();
        lock(&self.downstream.inflight).insert(call.id.clone(), upstream_id);
        let result = tokio::select! {
            // An answer that is there wins over a cancellation that came with it (a failed
            // upstream answers every pending request just before the session is cancelled).
            biased;
            result = pending.response() => result,
            () = call.cancel.cancelled() => {
                // The client's `notifications/cancelled` (handled separately) forwards the
                // cancellation with its reason; let it run first. Whichever removes the entry
                // tells the server, once.
                tokio::task::yield_now().await;
                if let Some(id) = lock(&self.downstream.inflight).remove(&call.id) {
                    self.upstream.cancel(id, None);
                }
                return Err(ErrorData::new(ErrorCode::INTERNAL_ERROR, "cancelled", None));
            }
            () = self.client_gone.cancelled() => {
                return Err(ErrorData::internal_error("the client disconnected", None));
            }
        };
        lock(&self.downstream.inflight).remove(&call.id);
        result.map_err(|e| match e {
            CallError::Rpc(error) => error,
            CallError::Gone(failure) => self.gone(&failure),
        })
    }

    async fn call_tool(
        &self,
        request: CallToolRequest,
        call: &Call,
    ) -> Result<ServerResult, ErrorData> {
        let started = Instant::now();
        let tool = request.params.name.to_string();
        let result = self
            .forward(ClientRequest::CallToolRequest(request), call)
            .await;
        let mut record = CallRecord::new(self.upstream.name(), &tool, CallStatus::Ok);
        let result = match result {
            Ok(value) if self.reencoder.options().format == crate::encoding::Format::Json => {
                // Results stay exactly as they are.
                Ok(ServerResult::CustomResult(CustomResult(value)))
            }
            Ok(value) => {
                let encode_started = Instant::now();
                // Encoding and counting a large result takes milliseconds of CPU: off the
                // threads that move messages.
                let reencoder = self.reencoder.clone();
                let name = tool.clone();
                let (value, (status, format, before, after)) =
                    tokio::task::spawn_blocking(move || {
                        let mut value = value;
                        let outcome = reencode_result(&reencoder, &name, &mut value);
                        (value, outcome)
                    })
                    .await
                    .map_err(|e| {
                        ErrorData::internal_error(format!("re-encoding failed: {e}"), None)
                    })?;
                record.status = status;
                record.format = format;
                record.tokens_before = before as u64;
                record.tokens_after = after as u64;
                record.encode_ms = millis(encode_started.elapsed());
                Ok(ServerResult::CustomResult(CustomResult(value)))
            }
            Err(error) => {
                record.status = if call.cancel.is_cancelled() {
                    CallStatus::Cancelled
                } else {
                    CallStatus::Error
                };
                Err(error)
            }
        };
        record.total_ms = millis(started.elapsed());
        self.stats.record(&record);
        result
    }
}

fn millis(duration: std::time::Duration) -> f64 {
    (duration.as_secs_f64() * 1e6).round() / 1e3
}

/// Re-encodes the JSON text items of a raw `tools/call` result in place: its status, the
/// format(s) used (`unchanged` when its JSON was kept, `None` without JSON text or with the
/// `json` format, which does no work at all), and the tokens of its JSON text before and
/// after. Error results, `structuredContent` and every item that is not JSON text are left
/// alone.
pub(crate) fn reencode_result(
    reencoder: &Reencoder,
    tool: &str,
    result: &mut Value,
) -> (CallStatus, Option<String>, usize, usize) {
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        return (CallStatus::ToolError, None, 0, 0);
    }
    if reencoder.options().format == crate::encoding::Format::Json {
        // Results stay exactly as they are: no parsing, no counting.
        return (CallStatus::Ok, None, 0, 0);
    }
    let Some(content) = result.get_mut("content").and_then(Value::as_array_mut) else {
        return (CallStatus::Ok, None, 0, 0);
    };
    let (mut before, mut after) = (0, 0);
    let mut formats: Vec<&'static str> = Vec::new();
    let mut kept = false;
    for item in content {
        if item.get("type").and_then(Value::as_str) != Some("text") {
            continue;
        }
        let Some(Value::String(text)) = item.get_mut("text") else {
            continue;
        };
        let outcome = reencoder.reencode_text(text, tool);
        let (b, a) = outcome.tokens();
        before += b;
        after += a;
        match outcome {
            Outcome::NotJson => {}
            Outcome::Kept { .. } => kept = true,
            Outcome::Replaced { choice, .. } => {
                if !formats.contains(&choice.encoding.name()) {
                    formats.push(choice.encoding.name());
                }
                *text = choice.text;
            }
        }
    }
    let format = if !formats.is_empty() {
        Some(formats.join("+"))
    } else if kept {
        Some("unchanged".to_owned())
    } else {
        None
    };
    (CallStatus::Ok, format, before, after)
}

impl Route for Passthrough {
    async fn request(&self, request: ClientRequest, call: Call) -> Result<ServerResult, ErrorData> {
        self.downstream.set_peer(&call.peer);
        match request {
            ClientRequest::CallToolRequest(request) => self.call_tool(request, &call).await,
            ClientRequest::InitializeRequest(request) => {
                // The client's own params when the transport kept them.
                let request = match lock(&self.raw.request).take() {
                    Some(params) => ClientRequest::CustomRequest(rmcp::model::CustomRequest::new(
                        "initialize",
                        Some(params),
                    )),
                    None => ClientRequest::InitializeRequest(request),
                };
                let value = self.forward(request, &call).await?;
                *lock(&self.raw.result) = Some(value.clone());
                // rmcp's server needs the typed result to finish the handshake.
                let result: InitializeResult = serde_json::from_value(value).map_err(|e| {
                    ErrorData::internal_error(
                        format!(
                            "upstream MCP server `{}` answered initialize with something else: {e}",
                            self.upstream.name()
                        ),
                        None,
                    )
                })?;
                *lock(&self.initialized) = Some(result.clone());
                self.downstream.mark_ready();
                Ok(ServerResult::InitializeResult(result))
            }
            request => Ok(ServerResult::CustomResult(CustomResult(
                self.forward(request, &call).await?,
            ))),
        }
    }

    async fn notification(&self, notification: ClientNotification, peer: Peer<RoleServer>) {
        self.downstream.set_peer(&peer);
        match notification {
            ClientNotification::CancelledNotification(mut cancelled) => {
                // The client's id becomes the upstream's; a request already answered (or one
                // the upstream never saw) needs nothing.
                let Some(id) = cancelled.params.request_id.as_ref() else {
                    return;
                };
                let Some(upstream_id) = lock(&self.downstream.inflight).remove(id) else {
                    return;
                };
                cancelled.params.request_id = Some(upstream_id);
                self.upstream
                    .notify(ClientNotification::CancelledNotification(cancelled));
            }
            ClientNotification::ProgressNotification(mut progress) => {
                // Progress on a request the server sent the client: back to the server's token.
                let original = lock(&self.downstream.progress)
                    .get(&progress.params.progress_token)
                    .cloned();
                match original {
                    Some(Some(token)) => progress.params.progress_token = token,
                    // rmcp's token on a request that had none: the server asked for no progress.
                    Some(None) => return,
                    None => {}
                }
                self.upstream
                    .notify(ClientNotification::ProgressNotification(progress));
            }
            other => self.upstream.notify(other),
        }
    }

    fn info(&self) -> InitializeResult {
        lock(&self.initialized).clone().unwrap_or_default()
    }

    fn protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        match &*lock(&self.initialized) {
            // Agree to exactly what the server agreed to.
            Some(result) => Cow::Owned(vec![result.protocol_version.clone()]),
            None => Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS),
        }
    }

    async fn failed(&self) -> Error {
        let failure = self.upstream.failed().await;
        failure.to_error(self.upstream.name(), &self.spec)
    }

    fn failure(&self) -> Option<Error> {
        self.upstream
            .failure()
            .map(|failure| failure.to_error(self.upstream.name(), &self.spec))
    }

    async fn shutdown(&self) {
        self.upstream.shutdown().await;
    }

    fn client_gone(&self) {
        self.client_gone.cancel();
    }
}

impl Drop for Passthrough {
    fn drop(&mut self) {
        // A session that ends without a shutdown (an HTTP session closed or expired) still
        // ends its upstream.
        self.upstream.shutdown_in_background();
    }
}
