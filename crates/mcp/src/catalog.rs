//! The catalog modes: several upstreams behind one agentwire-toolcard [`Gateway`].
//!
//! [`CatalogRoute`] is the route of [`Mode::Proxy`](crate::Mode::Proxy) (spec §4.1: one
//! stripped entry per upstream tool, `tool_hydrate`, `tool_execute`) and
//! [`Mode::Gateway`](crate::Mode::Gateway) (§4.2: exactly `tool_browse`, `tool_execute`,
//! `tool_view`). The [`Gateway`] answers every `tools/list` and `tools/call`; this route does
//! the I/O around it:
//!
//! - the client's `initialize` starts every upstream's own handshake (with the client's
//!   capabilities), then reads each one's `tools/list` (every page) into the catalog; an
//!   upstream that cannot start is left out and reported, never the whole catalog;
//! - a `tool_execute` the gateway dispatches goes to its upstream as `tools/call` (with the
//!   client's `_meta`, so progress flows back), and its outcome goes back through
//!   [`Gateway::complete`] or [`Gateway::fail`] (`UPSTREAM_ERROR`, `UPSTREAM_TIMEOUT`,
//!   `UPSTREAM_UNAVAILABLE`);
//! - an upstream's `notifications/tools/list_changed` re-reads its tools and, when the
//!   client's `tools/list` changed, tells the client; an upstream that dies has its tools
//!   removed the same way;
//! - tool results are re-encoded with the proxy's format: in proxy mode the passed-through
//!   result as in passthrough; in gateway mode the upstream result before the firewall, when
//!   the re-encoded result is then passed inline (a result stored as artifacts stays JSON, so
//!   that `tool_view` can address it by JSON pointer).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agentwire_toolcard::{
    ArtifactStore, CatalogBuilder, Dispatch, Gateway, GatewayOptions, ResultEnvelope, UpstreamCall,
    UpstreamFailure,
};
use futures::future::BoxFuture;
use rmcp::model::{
    ClientNotification, ClientRequest, ClientResult, CustomNotification, CustomRequest,
    CustomResult, ErrorCode, ErrorData, InitializeResult, ProtocolVersion, RequestId,
    ServerRequest, ServerResult,
};
use rmcp::service::RoleServer;
use rmcp::Peer;
use serde_json::{json, Value};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::config::ServerSpec;
use crate::encoding::{Format, Reencoder};
use crate::error::{Error, ErrorKind};
use crate::proxy::Notice;
use crate::route::{reencode_result, Call, Downstream, Route};
use crate::stats::{CallRecord, CallStatus, Stats};
use crate::upstream::{CallError, Cancellation, Failure, Upstream, UpstreamEvents};

/// The most `tools/list` pages read from one upstream.
const MAX_LIST_PAGES: usize = 1000;

/// The `upstream` of the statistics of a call the gateway answered itself.
const SELF: &str = "agentwire";

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// One upstream of the catalog.
struct Member {
    spec: ServerSpec,
    upstream: Upstream,
}

/// What an upstream's own messages do: `list_changed` asks for a refresh, progress and log
/// messages go to the client, requests (sampling, elicitation, roots, ping) too.
struct MemberEvents {
    index: usize,
    refresh: mpsc::UnboundedSender<usize>,
    downstream: Arc<Downstream>,
}

impl UpstreamEvents for MemberEvents {
    fn notification(&self, notification: CustomNotification) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            match notification.method.as_str() {
                "notifications/tools/list_changed" => {
                    let _ = self.refresh.send(self.index);
                }
                "notifications/progress" | "notifications/message" => {
                    self.downstream.notification(notification).await;
                }
                // Resources and prompts are not served in the catalog modes.
                other => tracing::debug!(method = other, "an upstream notification was dropped"),
            }
        })
    }

    fn request(
        &self,
        request: ServerRequest,
        cancel: Cancellation,
    ) -> BoxFuture<'_, Result<ClientResult, ErrorData>> {
        self.downstream.request(request, cancel)
    }
}

/// The route of the proxy and gateway modes.
pub(crate) struct CatalogRoute {
    members: Vec<Member>,
    gateway: Arc<Mutex<Gateway>>,
    downstream: Arc<Downstream>,
    reencoder: Arc<Reencoder>,
    stats: Arc<Stats>,
    notice: Option<Notice>,
    /// Set once every upstream has been connected (or left out) and the catalog built.
    ready: watch::Sender<bool>,
    connect: tokio::sync::Mutex<bool>,
    initialized: Mutex<Option<InitializeResult>>,
    /// Client requests in flight upstream: their upstream and their id there.
    inflight: Mutex<HashMap<RequestId, (usize, RequestId)>>,
    client_gone: CancellationToken,
    tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// `tools/call` requests being answered: when the last upstream dies, the session ends
    /// only after they have their answers.
    active: std::sync::atomic::AtomicUsize,
}

/// Counts a `tools/call` as active while it lives.
struct Active<'a>(&'a std::sync::atomic::AtomicUsize);

impl<'a> Active<'a> {
    fn new(counter: &'a std::sync::atomic::AtomicUsize) -> Self {
        counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Active(counter)
    }
}

impl Drop for Active<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl CatalogRoute {
    /// Starts every upstream of `servers` and the tasks that keep the catalog current.
    pub(crate) fn start(
        servers: &[ServerSpec],
        options: GatewayOptions,
        reencoder: Arc<Reencoder>,
        stats: Arc<Stats>,
        timeout: Duration,
        typed: bool,
        notice: Option<Notice>,
    ) -> Arc<CatalogRoute> {
        let downstream = Arc::new(Downstream::new(typed));
        let (refresh, mut refreshes) = mpsc::unbounded_channel();
        let members: Vec<Member> = servers
            .iter()
            .enumerate()
            .map(|(index, spec)| Member {
                spec: spec.clone(),
                upstream: Upstream::start(
                    spec,
                    Arc::new(MemberEvents {
                        index,
                        refresh: refresh.clone(),
                        downstream: downstream.clone(),
                    }),
                    timeout,
                ),
            })
            .collect();
        let empty = CatalogBuilder::new()
            .build()
            .map(Arc::new)
            .unwrap_or_else(|_| unreachable_catalog());
        let route = Arc::new(CatalogRoute {
            members,
            gateway: Arc::new(Mutex::new(Gateway::new(empty, options))),
            downstream,
            reencoder,
            stats,
            notice,
            ready: watch::channel(false).0,
            connect: tokio::sync::Mutex::new(false),
            initialized: Mutex::default(),
            inflight: Mutex::default(),
            client_gone: CancellationToken::new(),
            tasks: Mutex::default(),
            active: Default::default(),
        });
        let mut tasks = Vec::new();
        // Refreshes, one at a time, once the catalog is built.
        let weak = Arc::downgrade(&route);
        let mut ready = route.ready.subscribe();
        tasks.push(tokio::spawn(async move {
            if ready.wait_for(|r| *r).await.is_err() {
                return;
            }
            while let Some(index) = refreshes.recv().await {
                let Some(route) = weak.upgrade() else { return };
                route.refresh(index).await;
            }
        }));
        // An upstream that dies takes its tools with it.
        for index in 0..route.members.len() {
            let weak = Arc::downgrade(&route);
            let upstream = route.members[index].upstream.clone();
            let mut ready = route.ready.subscribe();
            tasks.push(tokio::spawn(async move {
                let failure = upstream.failed().await;
                if failure.is_shutdown() || ready.wait_for(|r| *r).await.is_err() {
                    return;
                }
                let Some(route) = weak.upgrade() else { return };
                let member = &route.members[index];
                route.warn(&format!(
                    "{}; its tools are removed from the catalog",
                    failure.to_error(member.upstream.name(), &member.spec)
                ));
                if route.apply(index, &json!({"tools": []})) {
                    route.list_changed().await;
                }
            }));
        }
        *lock(&route.tasks) = tasks;
        route
    }

    /// Every upstream, for an HTTP server that ends them at shutdown.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn upstreams(&self) -> Vec<Upstream> {
        self.members.iter().map(|m| m.upstream.clone()).collect()
    }

    fn warn(&self, message: &str) {
        tracing::warn!("{message}");
        if let Some(Notice(notice)) = &self.notice {
            notice(message);
        }
    }

    /// Connects every upstream (once): its handshake, then its tools into the catalog.
    async fn connect(&self, client: &Value) -> Result<(), ErrorData> {
        let mut connected = self.connect.lock().await;
        if *connected {
            return Ok(());
        }
        let params = json!({
            "protocolVersion": client.get("protocolVersion").cloned()
                .unwrap_or_else(|| json!(ProtocolVersion::LATEST)),
            "capabilities": client.get("capabilities").cloned().unwrap_or_else(|| json!({})),
            "clientInfo": {"name": "agentwire-mcp", "version": env!("CARGO_PKG_VERSION")},
        });
        let lists = futures::future::join_all(
            self.members
                .iter()
                .map(|member| connect_member(member, params.clone())),
        )
        .await;
        let mut reasons = Vec::new();
        for (index, list) in lists.into_iter().enumerate() {
            match list {
                Ok(list) => {
                    self.apply(index, &list);
                }
                Err(reason) => {
                    let name = &self.members[index].spec.name;
                    self.warn(&format!(
                        "upstream MCP server `{name}` {reason}; its tools are left out"
                    ));
                    reasons.push(format!("`{name}` {reason}"));
                }
            }
        }
        if !self.members.is_empty() && reasons.len() == self.members.len() {
            return Err(ErrorData::internal_error(
                format!(
                    "no upstream MCP server could be reached: {}",
                    reasons.join("; ")
                ),
                None,
            ));
        }
        *connected = true;
        self.ready.send_replace(true);
        Ok(())
    }

    /// Puts upstream `index`'s tools list into the catalog, reporting skipped tools; whether
    /// the client's `tools/list` changed.
    fn apply(&self, index: usize, list: &Value) -> bool {
        let name = &self.members[index].spec.name;
        let refreshed = lock(&self.gateway).refresh(name, list);
        match refreshed {
            Ok(refresh) => {
                for skipped in &refresh.skipped {
                    self.warn(&format!("upstream `{name}`: {skipped}"));
                }
                refresh.list_changed
            }
            Err(error) => {
                self.warn(&format!(
                    "upstream MCP server `{name}` answered tools/list with something else: {error}"
                ));
                false
            }
        }
    }

    /// Re-reads upstream `index`'s tools after its `list_changed`.
    async fn refresh(&self, index: usize) {
        let member = &self.members[index];
        match list_tools(&member.upstream).await {
            Ok(list) => {
                if self.apply(index, &list) {
                    self.list_changed().await;
                }
            }
            Err(reason) => self.warn(&format!(
                "upstream MCP server `{}` could not list its tools again: {reason}",
                member.spec.name
            )),
        }
    }

    /// Tells the client its `tools/list` changed.
    async fn list_changed(&self) {
        self.downstream
            .notification(CustomNotification::new(
                "notifications/tools/list_changed",
                Some(json!({})),
            ))
            .await;
    }

    fn info_for(&self, client: &Value) -> InitializeResult {
        let mode = lock(&self.gateway).options().mode;
        let instructions = match mode {
            agentwire_toolcard::Mode::Proxy => {
                "Every upstream tool is listed by name with a stripped schema. Call \
                 tool_hydrate(tool_id) for a tool's input schema, then tool_execute(tool_id, \
                 args) to call it; arguments are checked before the call. Errors are JSON \
                 objects with a `code`."
            }
            _ => {
                "Find tools with tool_browse (a `query`, or a `path` such as `/`), call one with \
                 tool_execute(tool_id, args): the answer is a result envelope, and a large result \
                 is stored as artifacts whose handles tool_view reads a page at a time. Errors \
                 are JSON objects with a `code`."
            }
        };
        let version = client
            .get("protocolVersion")
            .cloned()
            .unwrap_or_else(|| json!(ProtocolVersion::LATEST));
        serde_json::from_value(json!({
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": true}},
            "serverInfo": {"name": "agentwire-mcp", "version": env!("CARGO_PKG_VERSION")},
            "instructions": instructions,
        }))
        .or_else(|_| {
            serde_json::from_value(json!({
                "protocolVersion": ProtocolVersion::LATEST,
                "capabilities": {"tools": {"listChanged": true}},
                "serverInfo": {"name": "agentwire-mcp", "version": env!("CARGO_PKG_VERSION")},
                "instructions": instructions,
            }))
        })
        .unwrap_or_default()
    }

    async fn call_tool(&self, params: Value, call: &Call) -> Result<ServerResult, ErrorData> {
        let _active = Active::new(&self.active);
        let started = Instant::now();
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let arguments = params.get("arguments").cloned().unwrap_or(Value::Null);
        let dispatch = lock(&self.gateway).call(&name, &arguments);
        let upstream_call = match dispatch {
            Dispatch::Reply(reply) => {
                let status = if reply.get("isError").and_then(Value::as_bool) == Some(true) {
                    CallStatus::ToolError
                } else {
                    CallStatus::Ok
                };
                let mut record = CallRecord::new(SELF, &name, status);
                record.total_ms = millis(started.elapsed());
                self.stats.record(&record);
                return Ok(ServerResult::CustomResult(CustomResult(reply)));
            }
            Dispatch::Upstream(upstream_call) => upstream_call,
            other => {
                return Err(ErrorData::internal_error(
                    format!("the gateway asked for something unknown: {other:?}"),
                    None,
                ))
            }
        };
        let server = upstream_call.server.clone().unwrap_or_default();
        let mut record = CallRecord::new(&server, &upstream_call.upstream_name, CallStatus::Ok);
        let outcome = self
            .execute(&upstream_call, params.get("_meta").cloned(), call)
            .await;
        let reply = match outcome {
            Ok(result) => {
                let encode_started = Instant::now();
                let (gateway, reencoder) = (self.gateway.clone(), self.reencoder.clone());
                let job = upstream_call.clone();
                let (reply, (status, format, before, after)) =
                    tokio::task::spawn_blocking(move || {
                        complete(&gateway, &reencoder, &job, &result)
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
                reply
            }
            Err(Outcome::Failed(failure)) => {
                record.status = CallStatus::Error;
                lock(&self.gateway).fail(&upstream_call, failure)
            }
            Err(Outcome::Cancelled(error)) => {
                record.status = CallStatus::Cancelled;
                record.total_ms = millis(started.elapsed());
                self.stats.record(&record);
                return Err(error);
            }
        };
        record.total_ms = millis(started.elapsed());
        self.stats.record(&record);
        Ok(ServerResult::CustomResult(CustomResult(reply)))
    }

    /// Sends `call` upstream and waits for its result.
    async fn execute(
        &self,
        upstream_call: &UpstreamCall,
        meta: Option<Value>,
        call: &Call,
    ) -> Result<Value, Outcome> {
        let server = upstream_call.server.as_deref().unwrap_or_default();
        let Some(index) = self.members.iter().position(|m| m.spec.name == server) else {
            return Err(Outcome::Failed(UpstreamFailure::Unavailable {
                message: format!("no upstream server is named `{server}`"),
            }));
        };
        let upstream = &self.members[index].upstream;
        let mut params = upstream_call.params();
        if let (Some(meta @ Value::Object(_)), Some(map)) = (meta, params.as_object_mut()) {
            map.insert("_meta".into(), meta);
        }
        let request = ClientRequest::CustomRequest(CustomRequest::new("tools/call", Some(params)));
        let pending = upstream
            .send_request(request)
            .map_err(|e| Outcome::Failed(failure_of(e, upstream.name())))?;
        lock(&self.inflight).insert(call.id.clone(), (index, pending.id().clone()));
        let result = tokio::select! {
            biased;
            result = pending.response() => result,
            () = call.cancel.cancelled() => {
                tokio::task::yield_now().await;
                if let Some((index, id)) = lock(&self.inflight).remove(&call.id) {
                    self.members[index].upstream.cancel(id, None);
                }
                return Err(Outcome::Cancelled(ErrorData::new(
                    ErrorCode::INTERNAL_ERROR,
                    "cancelled",
                    None,
                )));
            }
            () = self.client_gone.cancelled() => {
                return Err(Outcome::Cancelled(ErrorData::internal_error(
                    "the client disconnected",
                    None,
                )));
            }
        };
        lock(&self.inflight).remove(&call.id);
        result.map_err(|e| Outcome::Failed(failure_of(e, upstream.name())))
    }
}

/// How an upstream call ended without a result.
enum Outcome {
    /// It failed: the gateway answers with the matching §3.4 error.
    Failed(UpstreamFailure),
    /// The client cancelled it or left.
    Cancelled(ErrorData),
}

fn failure_of(error: CallError, upstream: &str) -> UpstreamFailure {
    match error {
        CallError::Rpc(error) => UpstreamFailure::Error {
            code: Some(i64::from(error.code.0)),
            message: error.message.into_owned(),
        },
        CallError::Gone(Failure::Timeout(after)) => UpstreamFailure::Timeout { after: Some(after) },
        CallError::Gone(failure) => UpstreamFailure::Unavailable {
            message: failure.to_error_data(upstream).message.into_owned(),
        },
    }
}

/// The client's answer to a `tool_execute` whose upstream returned `result`, re-encoded per
/// the mode (see the module docs), with the statistics of the re-encoding.
fn complete(
    gateway: &Mutex<Gateway>,
    reencoder: &Reencoder,
    call: &UpstreamCall,
    result: &Value,
) -> (Value, (CallStatus, Option<String>, usize, usize)) {
    let mode = lock(gateway).options().mode;
    if mode == agentwire_toolcard::Mode::Proxy {
        let mut reply = lock(gateway).complete(call, result);
        let stats = reencode_result(reencoder, &call.upstream_name, &mut reply);
        return (reply, stats);
    }
    if reencoder.options().format == Format::Json {
        let reply = lock(gateway).complete(call, result);
        return (reply, (CallStatus::Ok, None, 0, 0));
    }
    let mut encoded = result.clone();
    let (status, format, before, after) =
        reencode_result(reencoder, &call.upstream_name, &mut encoded);
    let replaced = format.as_deref().is_some_and(|f| f != "unchanged");
    if replaced {
        // Inline once re-encoded? Tried on a scratch store: a result over the budget must
        // reach the firewall as JSON, so that its artifacts can be addressed by pointer.
        let firewall = lock(gateway).options().firewall.clone();
        let mut scratch = ArtifactStore::new(lock(gateway).options().store);
        let trial = ResultEnvelope::from_result(&encoded, None, &firewall, &mut scratch);
        if trial.firewall.is_some_and(|f| !f.triggered) {
            let reply = lock(gateway).complete(call, &encoded);
            return (reply, (status, format, before, after));
        }
    }
    let reply = lock(gateway).complete(call, result);
    let format = format.map(|f| if replaced { "unchanged".to_owned() } else { f });
    (reply, (status, format, before, before))
}

fn millis(duration: Duration) -> f64 {
    (duration.as_secs_f64() * 1e6).round() / 1e3
}

/// Never happens: an empty catalog always builds. A catalog of nothing, built another way.
fn unreachable_catalog() -> Arc<agentwire_toolcard::Catalog> {
    Arc::new(
        agentwire_toolcard::Catalog::from_tools_list(&json!({"tools": []}))
            .unwrap_or_else(|_| panic!("an empty tools list always makes a catalog")),
    )
}

/// The upstream's handshake, then its tools.
async fn connect_member(member: &Member, params: Value) -> Result<Value, String> {
    let upstream = &member.upstream;
    let request = ClientRequest::CustomRequest(CustomRequest::new("initialize", Some(params)));
    let pending = upstream
        .send_request(request)
        .map_err(|e| reason(e, upstream.name()))?;
    let result = pending
        .response()
        .await
        .map_err(|e| reason(e, upstream.name()))?;
    if !result.get("capabilities").is_some_and(Value::is_object) {
        return Err(format!("answered initialize with something else: {result}"));
    }
    upstream.notify(ClientNotification::CustomNotification(
        CustomNotification::new("notifications/initialized", Some(json!({}))),
    ));
    if result["capabilities"].get("tools").is_none() {
        return Ok(json!({"tools": []}));
    }
    list_tools(upstream).await
}

/// Every page of the upstream's `tools/list`, as one `{"tools": [...]}`.
async fn list_tools(upstream: &Upstream) -> Result<Value, String> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_LIST_PAGES {
        // `params` is an object, never `null` (which servers validating it drop in silence).
        let params = match &cursor {
            Some(cursor) => json!({"cursor": cursor}),
            None => json!({}),
        };
        let request = ClientRequest::CustomRequest(CustomRequest::new("tools/list", Some(params)));
        let pending = upstream
            .send_request(request)
            .map_err(|e| reason(e, upstream.name()))?;
        let mut page = pending
            .response()
            .await
            .map_err(|e| reason(e, upstream.name()))?;
        match page.get_mut("tools").map(Value::take) {
            Some(Value::Array(items)) => tools.extend(items),
            _ => {
                return Err(format!(
                    "answered tools/list without a `tools` array: {page}"
                ))
            }
        }
        match page.get("nextCursor").and_then(Value::as_str) {
            Some(next) if !next.is_empty() => cursor = Some(next.to_owned()),
            _ => return Ok(json!({"tools": tools})),
        }
    }
    Err(format!("listed more than {MAX_LIST_PAGES} pages of tools"))
}

fn reason(error: CallError, upstream: &str) -> String {
    match error {
        CallError::Rpc(error) => format!("answered with an error: {}", error.message),
        CallError::Gone(failure) => {
            let message = failure.to_error_data(upstream).message.into_owned();
            let prefix = format!("upstream MCP server `{upstream}` ");
            message
                .strip_prefix(&prefix)
                .map_or(message.clone(), str::to_owned)
        }
    }
}

impl Route for CatalogRoute {
    async fn request(&self, request: ClientRequest, call: Call) -> Result<ServerResult, ErrorData> {
        self.downstream.set_peer(&call.peer);
        match request {
            ClientRequest::InitializeRequest(request) => {
                let client = serde_json::to_value(&request.params).unwrap_or(Value::Null);
                self.connect(&client).await?;
                let info = self.info_for(&client);
                *lock(&self.initialized) = Some(info.clone());
                self.downstream.mark_ready();
                Ok(ServerResult::InitializeResult(info))
            }
            ClientRequest::ListToolsRequest(_) => {
                let tools = lock(&self.gateway).tools_list();
                Ok(ServerResult::CustomResult(CustomResult(tools)))
            }
            ClientRequest::CallToolRequest(request) => {
                let params = serde_json::to_value(&request.params).unwrap_or(Value::Null);
                self.call_tool(params, &call).await
            }
            ClientRequest::PingRequest(_) => {
                Ok(ServerResult::CustomResult(CustomResult(json!({}))))
            }
            ClientRequest::ListResourcesRequest(_) => Ok(ServerResult::CustomResult(CustomResult(
                json!({"resources": []}),
            ))),
            ClientRequest::ListResourceTemplatesRequest(_) => Ok(ServerResult::CustomResult(
                CustomResult(json!({"resourceTemplates": []})),
            )),
            ClientRequest::ListPromptsRequest(_) => Ok(ServerResult::CustomResult(CustomResult(
                json!({"prompts": []}),
            ))),
            _ => Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                "agentwire mcp serves tools only in the proxy and gateway modes",
                None,
            )),
        }
    }

    async fn notification(&self, notification: ClientNotification, peer: Peer<RoleServer>) {
        self.downstream.set_peer(&peer);
        match notification {
            ClientNotification::CancelledNotification(mut cancelled) => {
                let Some(id) = cancelled.params.request_id.as_ref() else {
                    return;
                };
                let Some((index, upstream_id)) = lock(&self.inflight).remove(id) else {
                    return;
                };
                cancelled.params.request_id = Some(upstream_id);
                self.members[index]
                    .upstream
                    .notify(ClientNotification::CancelledNotification(cancelled));
            }
            ClientNotification::RootsListChangedNotification(changed) => {
                for member in &self.members {
                    member
                        .upstream
                        .notify(ClientNotification::RootsListChangedNotification(
                            changed.clone(),
                        ));
                }
            }
            _ => {}
        }
    }

    fn info(&self) -> InitializeResult {
        lock(&self.initialized)
            .clone()
            .unwrap_or_else(|| self.info_for(&Value::Null))
    }

    fn protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS)
    }

    async fn failed(&self) -> Error {
        let failures =
            futures::future::join_all(self.members.iter().map(|member| member.upstream.failed()))
                .await;
        // The calls that were waiting on the upstreams are being answered: give them a moment
        // to be (each already has its error).
        let waited = Instant::now();
        while self.active.load(std::sync::atomic::Ordering::SeqCst) > 0
            && waited.elapsed() < Duration::from_secs(2)
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        self.all_failed(&failures)
    }

    fn failure(&self) -> Option<Error> {
        let failures: Option<Vec<Failure>> = self
            .members
            .iter()
            .map(|member| member.upstream.failure())
            .collect();
        failures.map(|failures| self.all_failed(&failures))
    }

    async fn shutdown(&self) {
        futures::future::join_all(self.members.iter().map(|m| m.upstream.shutdown())).await;
    }

    fn client_gone(&self) {
        self.client_gone.cancel();
    }
}

impl CatalogRoute {
    /// The error of a route whose every upstream is gone.
    fn all_failed(&self, failures: &[Failure]) -> Error {
        match (&self.members[..], failures) {
            ([member], [failure]) => failure.to_error(member.upstream.name(), &member.spec),
            _ => Error::new(ErrorKind::UpstreamExited {
                upstream: self
                    .members
                    .iter()
                    .map(|m| m.spec.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                reason: format!(
                    "every upstream is gone ({})",
                    self.members
                        .iter()
                        .zip(failures)
                        .map(|(m, f)| m.upstream.name().to_owned()
                            + ": "
                            + &f.to_error_data(m.upstream.name()).message)
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
            }),
        }
    }
}

impl Drop for CatalogRoute {
    fn drop(&mut self) {
        for member in &self.members {
            member.upstream.shutdown_in_background();
        }
        for task in lock(&self.tasks).drain(..) {
            task.abort();
        }
    }
}
