//! The proxy: options, serving a client over a byte stream (stdio) or streamable HTTP, and
//! the totals at the end.

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rmcp::service::{serve_server, ServerInitializeError};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;

use crate::config::ServerSpec;
use crate::encoding::{EncodeOptions, Reencoder};
use crate::error::{Error, ErrorKind};
use crate::route::{Passthrough, ProxyService, RawInitialize, Route};
use crate::stats::{Stats, Summary};
use crate::stdio::StdioServer;

/// What the proxy shows its client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Mode {
    /// One upstream; everything passes through unchanged both ways, except JSON text in tool
    /// results, which is re-encoded.
    #[default]
    Passthrough,
    /// The transparent proxy of the gateway surface spec (§4.1), over one or more upstreams:
    /// `tools/list` holds one stripped entry per upstream tool plus `tool_hydrate` and
    /// `tool_execute`. Needs the `gateway` feature.
    Proxy,
    /// The gateway of the gateway surface spec (§4.2), over one or more upstreams: exactly
    /// `tool_browse`, `tool_execute` and `tool_view`, results in a ResultEnvelope behind the
    /// context firewall. Needs the `gateway` feature.
    Gateway,
}

impl Mode {
    /// The name used on command lines: `passthrough`, `proxy`, `gateway`.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Passthrough => "passthrough",
            Mode::Proxy => "proxy",
            Mode::Gateway => "gateway",
        }
    }
}

/// Options of a [`Proxy`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ProxyOptions {
    /// How tool results are re-encoded.
    pub encode: EncodeOptions,
    /// A file the statistics of every tool call are appended to, one JSON object per line.
    pub stats: Option<PathBuf>,
    /// How long an upstream may stay silent while requests wait before it is pinged, and how
    /// long the ping may then go unanswered before the upstream counts as hung (default 30 s).
    /// Also how long the proxy waits for a client's first request after the upstream failed
    /// to start, to answer it with the reason.
    pub timeout: Duration,
    /// What the client sees (default [`Mode::Passthrough`]).
    pub mode: Mode,
    /// In the proxy and gateway modes: browse in the cache-stable order of the gateway
    /// surface spec §5 (cards keep their place and score across calls; default off).
    pub cache_stable: bool,
}

impl Default for ProxyOptions {
    fn default() -> Self {
        ProxyOptions {
            encode: EncodeOptions::default(),
            stats: None,
            timeout: Duration::from_secs(30),
            mode: Mode::Passthrough,
            cache_stable: false,
        }
    }
}

impl ProxyOptions {
    /// The default options.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`encode`](Self::encode).
    pub fn encode(mut self, encode: EncodeOptions) -> Self {
        self.encode = encode;
        self
    }

    /// Sets [`stats`](Self::stats).
    pub fn stats(mut self, path: impl Into<PathBuf>) -> Self {
        self.stats = Some(path.into());
        self
    }

    /// Sets [`timeout`](Self::timeout).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets [`mode`](Self::mode).
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// Sets [`cache_stable`](Self::cache_stable).
    pub fn cache_stable(mut self, on: bool) -> Self {
        self.cache_stable = on;
        self
    }
}

/// An MCP proxy in front of one upstream server: everything passes through unchanged both
/// ways, except JSON text in tool results, which is re-encoded when that saves tokens.
///
/// A proxy can serve several sessions in turn or at once (over HTTP each session gets its own
/// upstream); its [`summary`](Proxy::summary) covers them all.
#[derive(Debug)]
pub struct Proxy {
    servers: Vec<ServerSpec>,
    #[cfg_attr(not(feature = "gateway"), allow(dead_code))]
    mode: Mode,
    #[cfg_attr(not(feature = "gateway"), allow(dead_code))]
    cache_stable: bool,
    timeout: Duration,
    reencoder: Arc<Reencoder>,
    stats: Arc<Stats>,
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    on_session_error: Option<Report>,
    #[cfg_attr(not(feature = "gateway"), allow(dead_code))]
    on_notice: Option<Notice>,
}

/// A callback for warnings (a tool the catalog skipped, an upstream left out), shown as a
/// placeholder by `Debug`.
#[derive(Clone)]
#[cfg_attr(not(feature = "gateway"), allow(dead_code))]
pub(crate) struct Notice(pub(crate) Arc<dyn Fn(&str) + Send + Sync>);

impl std::fmt::Debug for Notice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<callback>")
    }
}

/// A callback for errors, shown as a placeholder by `Debug`.
#[derive(Clone)]
#[cfg_attr(not(feature = "http"), allow(dead_code))]
struct Report(Arc<dyn Fn(&Error) + Send + Sync>);

impl std::fmt::Debug for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<callback>")
    }
}

impl Proxy {
    /// A proxy for `server`. Fails when the options need a feature this build lacks or the
    /// statistics file cannot be opened.
    pub fn new(server: ServerSpec, options: ProxyOptions) -> Result<Proxy, Error> {
        Proxy::with_servers(vec![server], options)
    }

    /// A proxy for several upstream servers: the proxy and gateway modes put every server's
    /// tools in one catalog, each server's name being its tools' namespace; passthrough
    /// takes exactly one. Fails on no server, two servers of one name, several servers in
    /// passthrough, options that need a feature this build lacks, or a statistics file that
    /// cannot be opened.
    pub fn with_servers(servers: Vec<ServerSpec>, options: ProxyOptions) -> Result<Proxy, Error> {
        let reencoder = Reencoder::new(options.encode)?;
        if options.timeout.is_zero() {
            return Err(Error::options("the timeout must be more than zero"));
        }
        if servers.is_empty() {
            return Err(Error::options("no upstream server"));
        }
        if options.mode == Mode::Passthrough && servers.len() > 1 {
            return Err(Error::options(format!(
                "passthrough serves exactly one upstream, not {} ({}); the proxy and gateway \
                 modes take several",
                servers.len(),
                servers
                    .iter()
                    .map(|s| s.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        if let Some(twice) = servers
            .iter()
            .enumerate()
            .find(|(i, s)| servers[..*i].iter().any(|t| t.name == s.name))
        {
            return Err(Error::options(format!(
                "two upstream servers are named `{}`",
                twice.1.name
            )));
        }
        #[cfg(not(feature = "gateway"))]
        if options.mode != Mode::Passthrough {
            return Err(Error::options(format!(
                "the {} mode needs the `gateway` feature of agentwire-mcp",
                options.mode.name()
            )));
        }
        #[cfg(not(feature = "http"))]
        if servers
            .iter()
            .any(|s| matches!(s.endpoint, crate::config::Endpoint::Url(_)))
        {
            return Err(Error::options(
                "an upstream URL needs the `http` feature of agentwire-mcp",
            ));
        }
        Ok(Proxy {
            servers,
            mode: options.mode,
            cache_stable: options.cache_stable,
            timeout: options.timeout,
            reencoder: Arc::new(reencoder),
            stats: Arc::new(Stats::open(options.stats.as_deref())?),
            on_session_error: None,
            on_notice: None,
        })
    }

    /// Calls `notice` with each warning of the proxy and gateway modes: a tool the catalog
    /// skipped (an invalid name, an over-budget card, a duplicate), an upstream left out
    /// because it could not be reached, an upstream that died (its tools are removed). Each
    /// is also logged with `tracing` at the warning level.
    pub fn on_notice(mut self, notice: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.on_notice = Some(Notice(Arc::new(notice)));
        self
    }

    /// The options of the catalog modes' gateway.
    #[cfg(feature = "gateway")]
    fn gateway_options(&self) -> agentwire_toolcard::GatewayOptions {
        let mode = match self.mode {
            Mode::Proxy => agentwire_toolcard::Mode::Proxy,
            _ => agentwire_toolcard::Mode::Gateway,
        };
        agentwire_toolcard::GatewayOptions::new(mode).cache_stable(self.cache_stable)
    }

    /// Calls `report` when a session over HTTP ends because its upstream failed (over stdio
    /// the failure is what [`serve`](Proxy::serve) returns).
    pub fn on_session_error(mut self, report: impl Fn(&Error) + Send + Sync + 'static) -> Self {
        self.on_session_error = Some(Report(Arc::new(report)));
        self
    }

    /// The totals of every tool call so far.
    pub fn summary(&self) -> Summary {
        self.stats.summary()
    }

    /// Serves the process's client on stdin and stdout until the client closes stdin,
    /// `shutdown` resolves, or the upstream fails; see [`serve`](Proxy::serve).
    pub async fn serve_stdio(&self, shutdown: impl Future<Output = ()>) -> Result<(), Error> {
        self.serve(tokio::io::stdin(), tokio::io::stdout(), shutdown)
            .await
    }

    /// Serves one client session over a byte stream of newline-delimited JSON-RPC.
    ///
    /// Ends with `Ok` when the client closes its side or `shutdown` resolves, and with the
    /// upstream's failure when it cannot be started, exits, breaks the protocol or hangs; the
    /// client's pending requests are answered with that failure first. Either way the upstream
    /// is shut down (a child gets its stdin closed, then SIGTERM, then SIGKILL).
    pub async fn serve<R, W>(
        &self,
        reader: R,
        writer: W,
        shutdown: impl Future<Output = ()>,
    ) -> Result<(), Error>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let raw = Arc::new(RawInitialize::default());
        #[cfg(feature = "gateway")]
        if self.mode != Mode::Passthrough {
            let route = crate::catalog::CatalogRoute::start(
                &self.servers,
                self.gateway_options(),
                self.reencoder.clone(),
                self.stats.clone(),
                self.timeout,
                false,
                self.on_notice.clone(),
            );
            return self.serve_route(route, raw, reader, writer, shutdown).await;
        }
        let route = Arc::new(Passthrough::start(
            self.servers[0].clone(),
            self.reencoder.clone(),
            self.stats.clone(),
            self.timeout,
            Some(raw.clone()),
        ));
        self.serve_route(route, raw, reader, writer, shutdown).await
    }

    /// Serves one session over a byte stream with `route`.
    async fn serve_route<Rt, R, W>(
        &self,
        route: Arc<Rt>,
        raw: Arc<RawInitialize>,
        reader: R,
        writer: W,
        shutdown: impl Future<Output = ()>,
    ) -> Result<(), Error>
    where
        Rt: Route,
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let closed = CancellationToken::new();
        let transport = StdioServer::new(reader, writer, closed.clone(), raw);
        let mut shutdown = std::pin::pin!(shutdown);
        let handshake = tokio::select! {
            result = serve_server(ProxyService(route.clone()), transport) => result,
            // An upstream that failed before the client's `initialize`: wait a while for it, to
            // answer it with the reason, but not forever.
            error = async {
                let error = route.failed().await;
                tokio::time::sleep(self.timeout).await;
                error
            } => {
                route.shutdown().await;
                return Err(error);
            }
            () = &mut shutdown => {
                route.shutdown().await;
                return Ok(());
            }
        };
        let running = match handshake {
            Ok(running) => running,
            Err(error) => {
                let failure = route.failure();
                route.shutdown().await;
                return match (failure, error) {
                    (Some(failure), _) => Err(failure),
                    // The client left before initializing.
                    (None, ServerInitializeError::ConnectionClosed(_)) => Ok(()),
                    (None, other) => Err(Error::new(ErrorKind::Session(other.to_string()))),
                };
            }
        };
        let cancel = running.cancellation_token();
        let mut waiting = tokio::spawn(running.waiting());
        let mut ended = false;
        let failure = tokio::select! {
            _ = &mut waiting => {
                ended = true;
                None
            }
            // The client closed its side: end now, without waiting for calls in flight.
            () = closed.cancelled() => None,
            () = &mut shutdown => None,
            error = route.failed() => Some(error),
        };
        if failure.is_none() {
            route.client_gone();
        }
        // On a failure the pending requests already have their error: rmcp writes them out
        // before it stops.
        cancel.cancel();
        if !ended {
            let _ = waiting.await;
        }
        route.shutdown().await;
        failure.map_or(Ok(()), Err)
    }

    /// Serves clients over streamable HTTP on `listener` (at any path; clients use `/mcp` by
    /// convention) until `shutdown` resolves. Each client session gets its own upstream, ended
    /// with the session; an upstream that fails ends its session (reported through
    /// [`on_session_error`](Proxy::on_session_error)), not the server. Only `Host` headers
    /// naming a loopback address or the listening address are accepted.
    #[cfg(feature = "http")]
    pub async fn serve_http(
        &self,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()>,
    ) -> Result<(), Error> {
        #[cfg(feature = "gateway")]
        if self.mode != Mode::Passthrough {
            let (servers, options) = (self.servers.clone(), self.gateway_options());
            let (reencoder, stats, timeout) =
                (self.reencoder.clone(), self.stats.clone(), self.timeout);
            let notice = self.on_notice.clone();
            let make = move || {
                let route = crate::catalog::CatalogRoute::start(
                    &servers,
                    options.clone(),
                    reencoder.clone(),
                    stats.clone(),
                    timeout,
                    true,
                    notice.clone(),
                );
                let upstreams = route.upstreams();
                (route, upstreams)
            };
            return self.serve_http_with(listener, shutdown, make).await;
        }
        let (server, reencoder, stats, timeout) = (
            self.servers[0].clone(),
            self.reencoder.clone(),
            self.stats.clone(),
            self.timeout,
        );
        let report = self.on_session_error.clone();
        let make = move || {
            let route = Passthrough::start(
                server.clone(),
                reencoder.clone(),
                stats.clone(),
                timeout,
                // Over HTTP everything goes through rmcp's typed model.
                None,
            );
            let upstream = route.upstream().clone();
            if let Some(Report(report)) = report.clone() {
                let (upstream, server) = (upstream.clone(), server.clone());
                tokio::spawn(async move {
                    let failure = upstream.failed().await;
                    if !failure.is_shutdown() {
                        report(&failure.to_error(upstream.name(), &server));
                    }
                });
            }
            (Arc::new(route), vec![upstream])
        };
        self.serve_http_with(listener, shutdown, make).await
    }

    /// Serves streamable HTTP with a route per session made by `make` (the route and the
    /// upstreams to end at shutdown).
    #[cfg(feature = "http")]
    async fn serve_http_with<Rt: Route>(
        &self,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()>,
        make: impl Fn() -> (Arc<Rt>, Vec<crate::upstream::Upstream>) + Send + Sync + 'static,
    ) -> Result<(), Error> {
        use hyper_util::rt::{TokioExecutor, TokioIo};
        use hyper_util::server::conn::auto::Builder;
        use hyper_util::service::TowerToHyperService;
        use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
        use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

        let local = listener
            .local_addr()
            .map_err(|e| Error::io("cannot read the listening address", e))?;
        let stop = CancellationToken::new();
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(crate::http::allowed_hosts(local))
            .with_cancellation_token(stop.child_token());
        let upstreams = Arc::new(std::sync::Mutex::new(Vec::new()));
        let factory = {
            let upstreams = upstreams.clone();
            move || {
                let (route, started) = make();
                let mut upstreams = upstreams.lock().unwrap_or_else(|e| e.into_inner());
                upstreams.retain(|u: &crate::upstream::Upstream| u.failure().is_none());
                upstreams.extend(started);
                Ok(crate::http::HttpHandler(route))
            }
        };
        let service =
            StreamableHttpService::new(factory, Arc::new(LocalSessionManager::default()), config);
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let stream = match accepted {
                        Ok((stream, _)) => stream,
                        Err(e) => {
                            // Out of descriptors, say: wait a moment rather than spin.
                            tracing::warn!(error = %e, "accept failed");
                            tokio::time::sleep(Duration::from_millis(50)).await;
                            continue;
                        }
                    };
                    let service = TowerToHyperService::new(service.clone());
                    tokio::spawn(async move {
                        let served = Builder::new(TokioExecutor::new())
                            .serve_connection_with_upgrades(TokioIo::new(stream), service)
                            .await;
                        if let Err(e) = served {
                            tracing::debug!(error = %e, "connection ended with an error");
                        }
                    });
                }
                () = &mut shutdown => break,
            }
        }
        stop.cancel();
        let open: Vec<_> = upstreams
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain(..)
            .collect();
        for upstream in open {
            upstream.shutdown().await;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_are_checked_against_the_mode() {
        let a = || ServerSpec::command("a", "true", Vec::<String>::new());
        let b = || ServerSpec::command("b", "true", Vec::<String>::new());
        let err = Proxy::with_servers(vec![a(), b()], ProxyOptions::new()).unwrap_err();
        assert_eq!(err.code(), "invalid_options");
        assert!(
            err.message().contains("passthrough serves exactly one"),
            "{err}"
        );
        let err = Proxy::with_servers(Vec::new(), ProxyOptions::new()).unwrap_err();
        assert!(err.message().contains("no upstream"), "{err}");
        let gateway = ProxyOptions::new().mode(Mode::Gateway);
        let err = Proxy::with_servers(vec![a(), a()], gateway.clone()).unwrap_err();
        assert!(
            err.message().contains("two upstream servers are named `a`"),
            "{err}"
        );
        let two = Proxy::with_servers(vec![a(), b()], gateway);
        if cfg!(feature = "gateway") {
            assert!(two.is_ok());
        } else {
            assert!(two.unwrap_err().message().contains("`gateway` feature"));
        }
        assert_eq!(Mode::default().name(), "passthrough");
    }
}
