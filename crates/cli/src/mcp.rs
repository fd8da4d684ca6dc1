//! `agentwire mcp`: an MCP proxy that re-encodes JSON tool results into fewer tokens.

use std::path::PathBuf;
use std::time::Duration;

use agentwire_mcp::{Config, EncodeOptions, Format, Mode, Proxy, ProxyOptions, ServerSpec};
use agentwire_tokens::Tokenizer;

use crate::CliError;

/// The format tool results are re-encoded in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum FormatArg {
    /// Per result, the cheapest of GCF, GCX1, TOON and compact JSON.
    Auto,
    /// GCF at the current spec, with the fewest tokens for --tokenizer.
    Gcf,
    /// GCX1, generic encoding under the tool's name.
    Gcx1,
    /// TOON.
    Toon,
    /// Leave results exactly as the server wrote them.
    Json,
}

impl FormatArg {
    fn format(self) -> Format {
        match self {
            FormatArg::Auto => Format::Auto,
            FormatArg::Gcf => Format::Gcf,
            FormatArg::Gcx1 => Format::Gcx1,
            FormatArg::Toon => Format::Toon,
            FormatArg::Json => Format::Json,
        }
    }
}

/// What the client sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ModeArg {
    /// One upstream, everything passed through, JSON tool results re-encoded.
    Passthrough,
    /// The gateway surface spec's transparent proxy (§4.1): one stripped entry per upstream
    /// tool, plus tool_hydrate and tool_execute.
    Proxy,
    /// The gateway surface spec's gateway (§4.2): exactly tool_browse, tool_execute and
    /// tool_view.
    Gateway,
}

impl ModeArg {
    fn mode(self) -> Mode {
        match self {
            ModeArg::Passthrough => Mode::Passthrough,
            ModeArg::Proxy => Mode::Proxy,
            ModeArg::Gateway => Mode::Gateway,
        }
    }
}

/// Arguments of `agentwire mcp`.
#[derive(Debug, clap::Args)]
#[command(
    override_usage = "agentwire mcp [OPTIONS] -- <COMMAND> [ARGS]...\n       \
                      agentwire mcp [OPTIONS] --url <URL>\n       \
                      agentwire mcp [OPTIONS] --config <FILE>\n       \
                      agentwire mcp --mode proxy|gateway [OPTIONS] --config <FILE>",
    after_help = "\
Everything passes through unchanged in both directions, except tool results: a text item whose
text is a JSON object or array is replaced by its encoding in --format when that saves at least
--min-tokens tokens. Error results, structuredContent, images, audio, resources and text that is
not JSON pass unchanged. `agentwire decode` reads back whatever the proxy wrote.

The upstream: `-- <COMMAND> [ARGS]...` starts it as a child over stdio (environment inherited);
--url connects to a streamable-HTTP server; --config reads [servers.<name>] tables with
`command`, `args`, `env` or `url` (one server in passthrough, any number in the proxy and
gateway modes). The client is served on stdio, or on streamable HTTP at http://ADDR/mcp with
--listen.

--mode proxy and --mode gateway put every upstream's tools in one catalog (the gateway surface
spec; docs/toolcard.md): a server's name (its [servers.<name>] table, or --name) is the
namespace of its tools' ids. proxy lists one stripped entry per tool plus tool_hydrate and
tool_execute; gateway lists exactly tool_browse, tool_execute and tool_view. Arguments are
checked against the tool's schema before anything goes upstream; errors are JSON objects with
the spec's codes (ARGS_INVALID, UPSTREAM_UNAVAILABLE, ...). A tool the catalog cannot take is
skipped and reported on stderr; an upstream's tools/list_changed refreshes the catalog; an
upstream that dies has its tools removed, and the command ends when every upstream is gone.

When the upstream cannot be started, exits, or stops answering (silent for --timeout seconds
while requests wait, then a ping unanswered as long), every pending request is answered with an
error and the command exits with status 1. A one-line summary goes to stderr at exit.

In an MCP client's configuration:
  \"command\": \"agentwire\",
  \"args\": [\"mcp\", \"--\", \"npx\", \"-y\", \"@modelcontextprotocol/server-memory\"]"
)]
pub(crate) struct Args {
    /// What the client sees: passthrough (the upstream itself), proxy (§4.1) or gateway
    /// (§4.2).
    #[arg(long, value_enum, default_value = "passthrough", value_name = "MODE")]
    mode: ModeArg,
    /// Proxy and gateway: browse in the cache-stable order of the gateway surface spec §5.
    #[arg(long)]
    cache_stable: bool,
    /// The upstream's name, for `-- <COMMAND>` and --url (the namespace of its tools' ids in
    /// the proxy and gateway modes; default the command's file name, or `upstream`).
    #[arg(long, value_name = "NAME", conflicts_with = "config")]
    name: Option<String>,
    /// The format of re-encoded tool results.
    #[arg(long, value_enum, default_value = "auto", value_name = "FORMAT")]
    format: FormatArg,
    /// Re-encode a result only when that saves at least N tokens.
    #[arg(long, default_value_t = 32, value_name = "N")]
    min_tokens: usize,
    /// The tokenizer that counts: o200k (o200k_base) or cl100k (cl100k_base).
    #[arg(long, default_value = "o200k", value_parser = crate::count::parse_tokenizer)]
    tokenizer: Tokenizer,
    /// Append per-call statistics (JSON Lines) to FILE.
    #[arg(long, value_name = "FILE")]
    stats: Option<PathBuf>,
    /// Serve the client over streamable HTTP at ADDR (for example 127.0.0.1:8080) instead of
    /// stdio; each client session gets its own upstream.
    #[arg(long, value_name = "ADDR")]
    listen: Option<String>,
    /// Seconds the upstream may stay silent while requests wait before it is pinged, and the
    /// ping may then go unanswered before it counts as hung.
    #[arg(long, default_value_t = 30.0, value_name = "SECONDS")]
    timeout: f64,
    /// The upstream's streamable-HTTP endpoint.
    #[arg(long, value_name = "URL", conflicts_with_all = ["config", "command"])]
    url: Option<String>,
    /// A TOML file with the upstreams as [servers.<name>] tables.
    #[arg(long, value_name = "FILE", conflicts_with = "command")]
    config: Option<PathBuf>,
    /// The upstream's command and arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// The upstreams the arguments name.
fn upstreams(args: &Args) -> Result<Vec<ServerSpec>, CliError> {
    if let Some(url) = &args.url {
        let name = args.name.clone().unwrap_or_else(|| "upstream".into());
        return Ok(vec![ServerSpec::url(name, url.clone())]);
    }
    if let Some(path) = &args.config {
        let config = Config::from_path(path).map_err(|e| CliError::Mcp(e.into()))?;
        if args.mode == ModeArg::Passthrough && config.servers.len() > 1 {
            return Err(CliError::Usage(format!(
                "{} names {} servers ({}); passthrough serves exactly one (--mode proxy and \
                 --mode gateway take several)",
                path.display(),
                config.servers.len(),
                config
                    .servers
                    .iter()
                    .map(|s| s.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        return Ok(config.servers);
    }
    let Some((command, rest)) = args.command.split_first() else {
        return Err(CliError::Usage(
            "name the upstream server: `-- <COMMAND> [ARGS]...`, --url URL or --config FILE".into(),
        ));
    };
    let name = args.name.clone().unwrap_or_else(|| {
        std::path::Path::new(command)
            .file_name()
            .map_or_else(|| command.clone(), |n| n.to_string_lossy().into_owned())
    });
    Ok(vec![ServerSpec::command(
        name,
        command.clone(),
        rest.iter().cloned(),
    )])
}

pub(crate) fn run(args: &Args) -> Result<(), CliError> {
    let servers = upstreams(args)?;
    if args.cache_stable && args.mode == ModeArg::Passthrough {
        return Err(CliError::Usage(
            "--cache-stable applies to --mode proxy and --mode gateway".into(),
        ));
    }
    if !(args.timeout.is_finite() && args.timeout > 0.0) {
        return Err(CliError::Usage(
            "--timeout must be a positive number of seconds".into(),
        ));
    }
    let mut options = ProxyOptions::new()
        .encode(
            EncodeOptions::new()
                .format(args.format.format())
                .min_tokens(args.min_tokens)
                .tokenizer(args.tokenizer),
        )
        .timeout(Duration::from_secs_f64(args.timeout))
        .mode(args.mode.mode())
        .cache_stable(args.cache_stable);
    if let Some(path) = &args.stats {
        options = options.stats(path);
    }
    let proxy = Proxy::with_servers(servers, options)
        .map_err(|e| CliError::Mcp(e.into()))?
        .on_session_error(|e| eprintln!("agentwire mcp: {e}"))
        .on_notice(|message| eprintln!("agentwire mcp: warning: {message}"));
    // Counting loads the tokenizer's table (tens of milliseconds): do it before the first call.
    args.tokenizer.preload();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(CliError::Runtime)?;
    let result = runtime.block_on(async {
        match &args.listen {
            Some(addr) => {
                let listener = tokio::net::TcpListener::bind(addr)
                    .await
                    .map_err(|source| CliError::Listen {
                        addr: addr.clone(),
                        source,
                    })?;
                if let Ok(local) = listener.local_addr() {
                    eprintln!("agentwire mcp: serving http://{local}/mcp");
                }
                proxy
                    .serve_http(listener, shutdown_signal())
                    .await
                    .map_err(|e| CliError::Mcp(e.into()))
            }
            None => proxy
                .serve_stdio(shutdown_signal())
                .await
                .map_err(|e| CliError::Mcp(e.into())),
        }
    });
    // Whatever is left (a server's grandchildren still writing, say) must not hold the exit.
    runtime.shutdown_timeout(Duration::from_millis(200));
    let summary = proxy.summary();
    eprintln!("agentwire mcp: {summary}");
    if let Some(error) = &summary.stats_error {
        eprintln!("agentwire mcp: warning: {error}");
    }
    result
}

/// Resolves on SIGINT or SIGTERM (Ctrl-C elsewhere).
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) {
            (Ok(mut interrupt), Ok(mut terminate)) => {
                tokio::select! {
                    _ = interrupt.recv() => {}
                    _ = terminate.recv() => {}
                }
            }
            _ => std::future::pending().await,
        }
    }
    #[cfg(not(unix))]
    {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}
