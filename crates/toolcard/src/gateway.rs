//! The two catalog modes of spec §4 as a transport-free state machine: what an MCP server
//! answers to `tools/list` and `tools/call` in the transparent proxy (§4.1) and the
//! three-tool gateway (§4.2), with the upstream calls left to the caller.
//!
//! The runtime owns the transport and the upstream connections; [`Gateway`] owns the
//! catalog, the cache-stable session, the artifact store and every answer. A `tools/call`
//! either is answered at once ([`Dispatch::Reply`]) or needs one upstream call
//! ([`Dispatch::Upstream`]), whose outcome the runtime hands back through
//! [`Gateway::complete`] or [`Gateway::fail`].

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map, Value};

use crate::artifact::{ArtifactStore, Selector, StoreLimits};
use crate::browse::{Session, DEFAULT_PAGE_SIZE, MAX_QUERY_BYTES, MAX_TOP_K};
use crate::catalog::{Catalog, NameEncoding, Skipped};
use crate::error::{args_invalid, clip, Error, ErrorKind};
use crate::firewall::{call_tool_result, FirewallOptions, Provenance, ResultEnvelope};
use crate::tool_id::ToolId;

/// The name of the gateway's browse tool.
pub const TOOL_BROWSE: &str = "tool_browse";
/// The name of the execute tool of both modes.
pub const TOOL_EXECUTE: &str = "tool_execute";
/// The name of the gateway's artifact viewer.
pub const TOOL_VIEW: &str = "tool_view";
/// The name of the proxy's hydrate tool.
pub const TOOL_HYDRATE: &str = "tool_hydrate";

/// Which surface the gateway presents (§4).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Mode {
    /// §4.1: one stripped entry per upstream tool in `tools/list`, plus `tool_hydrate` and
    /// `tool_execute`; results pass through unchanged.
    Proxy,
    /// §4.2: exactly `tool_browse`, `tool_execute` and `tool_view`; results pass through the
    /// context firewall into a [`ResultEnvelope`].
    #[default]
    Gateway,
}

/// How a [`Gateway`] behaves.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct GatewayOptions {
    /// The surface (default [`Mode::Gateway`]).
    pub mode: Mode,
    /// The cache-stable browse order of §5 (default off).
    pub cache_stable: bool,
    /// How the proxy's stripped entries are named (default [`NameEncoding::Mcp`]).
    pub names: NameEncoding,
    /// The firewall's budgets and token counter.
    pub firewall: FirewallOptions,
    /// The artifact store's limits.
    pub store: StoreLimits,
}

impl GatewayOptions {
    /// Options for `mode`, everything else by default.
    pub fn new(mode: Mode) -> Self {
        GatewayOptions {
            mode,
            ..GatewayOptions::default()
        }
    }

    /// These options with the cache-stable order on or off.
    #[must_use]
    pub fn cache_stable(mut self, on: bool) -> Self {
        self.cache_stable = on;
        self
    }

    /// These options with another name encoding for the proxy's stripped entries.
    #[must_use]
    pub fn names(mut self, names: NameEncoding) -> Self {
        self.names = names;
        self
    }

    /// These options with other firewall settings.
    #[must_use]
    pub fn firewall(mut self, firewall: FirewallOptions) -> Self {
        self.firewall = firewall;
        self
    }

    /// These options with other store limits.
    #[must_use]
    pub fn store(mut self, store: StoreLimits) -> Self {
        self.store = store;
        self
    }
}

/// What to do with a `tools/call`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Dispatch {
    /// Answer with this `CallToolResult` (`{"content": [...], "isError": ...}`).
    Reply(Value),
    /// Call this tool upstream, then hand the outcome to [`Gateway::complete`] or
    /// [`Gateway::fail`].
    Upstream(UpstreamCall),
}

/// One `tools/call` to send upstream, its arguments already validated (§4.4).
#[derive(Debug, Clone, PartialEq)]
pub struct UpstreamCall {
    /// The tool's canonical id.
    pub tool_id: ToolId,
    /// The upstream server to call (the name the catalog was given), if any.
    pub server: Option<String>,
    /// The tool's name upstream: `params.name` of the upstream `tools/call`.
    pub upstream_name: String,
    /// `params.arguments` of the upstream `tools/call`.
    pub arguments: Value,
}

impl UpstreamCall {
    /// The `params` of the upstream `tools/call` request: `{"name", "arguments"}`.
    pub fn params(&self) -> Value {
        json!({"name": self.upstream_name, "arguments": self.arguments})
    }

    fn provenance(&self) -> Provenance {
        Provenance {
            tool_id: self.tool_id.to_string(),
            server: self.server.clone(),
            upstream_name: self.upstream_name.clone(),
            protocol: "mcp",
        }
    }
}

/// How an upstream call failed without a result.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UpstreamFailure {
    /// The upstream answered with a JSON-RPC error (`UPSTREAM_ERROR`).
    Error {
        /// The JSON-RPC error code.
        code: Option<i64>,
        /// The error message.
        message: String,
    },
    /// No answer in time (`UPSTREAM_TIMEOUT`, retryable).
    Timeout {
        /// How long the runtime waited.
        after: Option<Duration>,
    },
    /// The upstream cannot be reached: it exited, or never started (`UPSTREAM_UNAVAILABLE`,
    /// retryable).
    Unavailable {
        /// What happened.
        message: String,
    },
}

/// What a catalog refresh changed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Refresh {
    /// Whether this gateway's `tools/list` answer changed: the runtime should send
    /// `notifications/tools/list_changed` to its client. Always false in gateway mode,
    /// whose three tools never change.
    pub list_changed: bool,
    /// The refreshed server's tools that the catalog could not take.
    pub skipped: Vec<Skipped>,
}

/// A proxy or gateway for one client session: the catalog of every upstream's tools, the
/// cache-stable browse session, and the artifact store.
///
/// ```
/// use std::sync::Arc;
/// use agentwire_toolcard::{CatalogBuilder, Dispatch, Gateway, GatewayOptions, Mode};
/// use serde_json::json;
///
/// let mut builder = CatalogBuilder::new();
/// builder.add_tools_list(Some("fs"), &json!([{
///     "name": "read_file", "description": "Read a file.",
///     "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}},
///                     "required": ["path"]}
/// }]))?;
/// let mut gateway = Gateway::new(Arc::new(builder.build()?), GatewayOptions::new(Mode::Gateway));
///
/// // tools/list: exactly the three meta-tools.
/// let names: Vec<String> = gateway.tools_list()["tools"].as_array().unwrap().iter()
///     .map(|t| t["name"].as_str().unwrap().to_owned()).collect();
/// assert_eq!(names, ["tool_browse", "tool_execute", "tool_view"]);
///
/// // tools/call tool_browse is answered at once.
/// let Dispatch::Reply(reply) = gateway.call("tool_browse", &json!({"query": "read a file"})) else {
///     unreachable!()
/// };
/// assert_eq!(reply["content"][0]["text"], "tool_browse: 1 tool, best match first\n\
///     fs:read_file#85b56782 (tool) — Read a file. side-effects\n");
///
/// // Bad arguments never reach upstream (§4.4).
/// let Dispatch::Reply(reply) = gateway.call("tool_execute",
///     &json!({"tool_id": "fs:read_file#85b56782", "args": {}})) else { unreachable!() };
/// assert_eq!(reply["isError"], true);
///
/// // Good arguments: the runtime calls upstream and hands the result back. (Without the
/// // `schema` feature, arguments cannot be checked and nothing goes upstream.)
/// if cfg!(feature = "schema") {
///     let Dispatch::Upstream(call) = gateway.call("tool_execute",
///         &json!({"tool_id": "fs:read_file#85b56782", "args": {"path": "/etc/hostname"}})) else {
///         unreachable!()
///     };
///     assert_eq!((call.server.as_deref(), call.upstream_name.as_str()), (Some("fs"), "read_file"));
///     let reply = gateway.complete(&call, &json!({"content": [{"type": "text", "text": "box"}]}));
///     let text = reply["content"][0]["text"].as_str().unwrap();
///     assert!(text.starts_with(r#"{"status":"ok","summary":"box""#));
/// }
/// # Ok::<(), agentwire_toolcard::Error>(())
/// ```
#[derive(Debug)]
pub struct Gateway {
    options: GatewayOptions,
    session: Session<Arc<Catalog>>,
    store: ArtifactStore,
}

impl Gateway {
    /// A gateway over `catalog`.
    pub fn new(catalog: Arc<Catalog>, options: GatewayOptions) -> Self {
        Gateway {
            session: Session::new(catalog).cache_stable(options.cache_stable),
            store: ArtifactStore::new(options.store),
            options,
        }
    }

    /// The options.
    pub fn options(&self) -> &GatewayOptions {
        &self.options
    }

    /// The current catalog.
    pub fn catalog(&self) -> &Catalog {
        self.session.catalog()
    }

    /// The browse session.
    pub fn session(&self) -> &Session<Arc<Catalog>> {
        &self.session
    }

    /// The artifact store.
    pub fn store(&self) -> &ArtifactStore {
        &self.store
    }

    /// The result of `tools/list`: `{"tools": [...]}`. Gateway mode: `tool_browse`,
    /// `tool_execute`, `tool_view`. Proxy mode: one stripped entry per tool (§4.1, names
    /// per [`GatewayOptions::names`]), then `tool_hydrate` and `tool_execute`.
    pub fn tools_list(&self) -> Value {
        let tools: Vec<Value> = match self.options.mode {
            Mode::Gateway => vec![
                tool_browse_definition(),
                tool_execute_definition(Mode::Gateway),
                tool_view_definition(),
            ],
            Mode::Proxy => self
                .catalog()
                .tools()
                .map(|t| {
                    serde_json::to_value(t.discovery_entry(self.options.names))
                        .unwrap_or(Value::Null)
                })
                .chain([
                    tool_hydrate_definition(),
                    tool_execute_definition(Mode::Proxy),
                ])
                .collect(),
        };
        json!({ "tools": tools })
    }

    /// Handles a `tools/call` of `name` with `arguments` (`null` counts as `{}`).
    ///
    /// Answered at once: `tool_browse` (gateway), `tool_hydrate` (proxy), `tool_view`
    /// (gateway), every error (bad arguments, unknown tools, `ARGS_INVALID` from the tool's
    /// schema, which never reaches upstream). `tool_execute` with valid arguments is a
    /// [`Dispatch::Upstream`]. A proxy's stripped entry called by its name is
    /// `UNKNOWN_TOOL`, with the `tool_execute` call to make instead (§4.1: discovery only).
    ///
    /// Errors are `isError` results: in proxy mode the §3.4 object itself, in gateway mode a
    /// [`ResultEnvelope`] with status `error` and the §3.4 object in `error`.
    pub fn call(&mut self, name: &str, arguments: &Value) -> Dispatch {
        let empty = Value::Object(Map::new());
        let arguments = if arguments.is_null() {
            &empty
        } else {
            arguments
        };
        let result = match (self.options.mode, name) {
            (Mode::Gateway, TOOL_BROWSE) => {
                self.session.browse_arguments(arguments).map(|response| {
                    Dispatch::Reply(call_tool_result(response.text().to_owned(), false))
                })
            }
            (Mode::Gateway, TOOL_VIEW) => self.view(arguments),
            (Mode::Proxy, TOOL_HYDRATE) => self.hydrate(arguments),
            (_, TOOL_EXECUTE) => self.execute(arguments),
            (mode, _) => {
                let tool_id = match mode {
                    Mode::Proxy => self.catalog().resolve(name).map(|t| t.id().to_string()),
                    Mode::Gateway => None,
                };
                Err(Error::new(ErrorKind::UnknownTool {
                    name: clip(name),
                    tool_id,
                }))
            }
        };
        result.unwrap_or_else(|error| Dispatch::Reply(self.error_reply(&error, None)))
    }

    /// The answer to a `tool_execute` whose upstream call returned `result` (the upstream's
    /// `CallToolResult`). Proxy mode passes it through unchanged (§4.1: transparent); gateway
    /// mode returns the [`ResultEnvelope`] the firewall makes of it, storing large results as
    /// artifacts; a result with `isError` gives status `error` with an `UPSTREAM_ERROR`
    /// beside the tool's output. A result that is not a `CallToolResult` object is
    /// `UPSTREAM_ERROR`.
    pub fn complete(&mut self, call: &UpstreamCall, result: &Value) -> Value {
        if !result.is_object() || !result.get("content").is_none_or(Value::is_array) {
            let error = Error::new(ErrorKind::UpstreamError {
                tool_id: call.tool_id.to_string(),
                server: call.server.clone(),
                upstream_code: None,
                message: "the upstream result is not a CallToolResult object".into(),
            });
            return self.error_reply(&error, Some(call));
        }
        match self.options.mode {
            Mode::Proxy => result.clone(),
            Mode::Gateway => {
                let mut envelope = ResultEnvelope::from_result(
                    result,
                    Some(call.provenance()),
                    &self.options.firewall,
                    &mut self.store,
                );
                if envelope.status == "error" {
                    envelope.error = Some(Error::new(ErrorKind::UpstreamError {
                        tool_id: call.tool_id.to_string(),
                        server: call.server.clone(),
                        upstream_code: None,
                        message: "the tool reported an error (isError); its output is the summary"
                            .into(),
                    }));
                }
                envelope.to_call_tool_result()
            }
        }
    }

    /// The answer to a `tool_execute` whose upstream call failed without a result:
    /// `UPSTREAM_ERROR`, `UPSTREAM_TIMEOUT` or `UPSTREAM_UNAVAILABLE` (the last two marked
    /// retryable in `details`).
    pub fn fail(&mut self, call: &UpstreamCall, failure: UpstreamFailure) -> Value {
        let tool_id = call.tool_id.to_string();
        let server = call.server.clone();
        let kind = match failure {
            UpstreamFailure::Error { code, message } => ErrorKind::UpstreamError {
                tool_id,
                server,
                upstream_code: code,
                message,
            },
            UpstreamFailure::Timeout { after } => ErrorKind::UpstreamTimeout {
                tool_id,
                server,
                after_ms: after.map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            },
            UpstreamFailure::Unavailable { message } => ErrorKind::UpstreamUnavailable {
                tool_id,
                server,
                message,
            },
        };
        self.error_reply(&Error::new(kind), Some(call))
    }

    /// Replaces the tools of upstream `server` with those of `list` (its new `tools/list`
    /// result; an empty list removes them), keeping the cache-stable state of every card
    /// still present (see [`Session::set_catalog`]). Called when an upstream connects or
    /// reports `notifications/tools/list_changed`. `server` is the name as first given to
    /// the catalog. A `list` that is not a tools list is an error and changes nothing.
    pub fn refresh(&mut self, server: &str, list: &Value) -> Result<Refresh, Error> {
        let before = self.tools_list();
        let catalog = Arc::new(self.catalog().with_server(server, list)?);
        let skipped = catalog
            .skipped()
            .iter()
            .filter(|s| s.server.as_deref() == Some(server))
            .cloned()
            .collect();
        self.session.set_catalog(catalog);
        Ok(Refresh {
            list_changed: self.tools_list() != before,
            skipped,
        })
    }

    fn execute(&mut self, arguments: &Value) -> Result<Dispatch, Error> {
        let map = object_arguments(TOOL_EXECUTE, arguments, &["tool_id", "args"])?;
        let tool_id = required_string(
            map,
            "tool_id",
            "tool_execute needs `tool_id`, a string: the id of a tool (or its name in tools/list)",
        )?;
        let args = match map.get("args") {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(args @ Value::Object(_)) => args.clone(),
            Some(_) => {
                return Err(args_invalid(
                    Some("args"),
                    "`args` must be an object: the tool's arguments",
                ))
            }
        };
        let catalog = self.catalog();
        let tool = catalog.hydrate(tool_id)?;
        catalog.validate_args(tool.tool_id.as_str(), &args)?;
        Ok(Dispatch::Upstream(UpstreamCall {
            tool_id: tool.tool_id.clone(),
            server: tool.server.map(str::to_owned),
            upstream_name: tool.upstream_name.to_owned(),
            arguments: args,
        }))
    }

    fn hydrate(&mut self, arguments: &Value) -> Result<Dispatch, Error> {
        let map = object_arguments(TOOL_HYDRATE, arguments, &["tool_id"])?;
        let tool_id = required_string(map, "tool_id", "tool_hydrate needs `tool_id`, a string")?;
        let hydration = self.session.hydrate(tool_id)?;
        let text = serde_json::to_string(&hydration).unwrap_or_default();
        Ok(Dispatch::Reply(call_tool_result(text, false)))
    }

    fn view(&mut self, arguments: &Value) -> Result<Dispatch, Error> {
        let map = object_arguments(TOOL_VIEW, arguments, &["handle", "selector"])?;
        let handle = required_string(
            map,
            "handle",
            "tool_view needs `handle`, a string: an artifact handle from tool_execute",
        )?;
        let selector = Selector::from_json(map.get("selector"))?;
        let firewall = &self.options.firewall;
        let page = self.store.view(
            handle,
            &selector,
            firewall.view_budget,
            firewall.counter.as_ref(),
        )?;
        Ok(Dispatch::Reply(call_tool_result(
            page.to_json_string(),
            false,
        )))
    }

    fn error_reply(&self, error: &Error, call: Option<&UpstreamCall>) -> Value {
        match self.options.mode {
            Mode::Proxy => call_tool_result(error.to_json_string(), true),
            Mode::Gateway => ResultEnvelope::failure(error, call.map(UpstreamCall::provenance))
                .to_call_tool_result(),
        }
    }
}

/// The string member `field`, or `ARGS_INVALID` with `message`.
fn required_string<'a>(
    map: &'a Map<String, Value>,
    field: &str,
    message: &str,
) -> Result<&'a str, Error> {
    match map.get(field) {
        Some(Value::String(value)) => Ok(value),
        _ => Err(args_invalid(Some(field), message)),
    }
}

fn object_arguments<'a>(
    tool: &str,
    arguments: &'a Value,
    members: &[&str],
) -> Result<&'a Map<String, Value>, Error> {
    let Some(map) = arguments.as_object() else {
        return Err(args_invalid(
            None,
            format!("{tool} arguments must be a JSON object"),
        ));
    };
    if let Some(unknown) = map.keys().find(|k| !members.contains(&k.as_str())) {
        return Err(args_invalid(
            Some(unknown),
            format!(
                "{tool} has no argument `{unknown}` (expected {})",
                members
                    .iter()
                    .map(|m| format!("`{m}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    Ok(map)
}

/// The MCP definition of `tool_browse(query | path, top_k?, cursor?)` (§3.1, §4.2).
pub fn tool_browse_definition() -> Value {
    json!({
        "name": TOOL_BROWSE,
        "description": "Find tools. Give exactly one of `query` (words describing the task; returns the best-matching tools) or `path` (`/` lists namespaces, `/<namespace>` its tools or groups; entries whose id starts with `/` are paths to browse). Each line is one tool: its id, kind, description. Pass the id to tool_execute. A path answer longer than one page names a `cursor` for the next page.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "maxLength": MAX_QUERY_BYTES, "description": "What the tool should do."},
                "path": {"type": "string", "description": "A browse path such as `/` or `/github/issues`."},
                "top_k": {"type": "integer", "minimum": 1, "maximum": MAX_TOP_K,
                          "description": format!("How many tools a query returns (default 8), or how many entries a path page holds (default {DEFAULT_PAGE_SIZE}).")},
                "cursor": {"type": "string", "description": "With `path`: the cursor a previous page named, for the next page."}
            },
            "additionalProperties": false
        },
        "annotations": {"readOnlyHint": true, "openWorldHint": false}
    })
}

/// The MCP definition of `tool_execute(tool_id, args)`; its description differs between the
/// proxy (ids from `tools/list`, results passed through) and the gateway (ids from
/// `tool_browse`, results in a ResultEnvelope).
pub fn tool_execute_definition(mode: Mode) -> Value {
    let description = match mode {
        Mode::Proxy => "Call a tool listed in tools/list: `tool_id` is its name there (or its canonical id), `args` its arguments (call tool_hydrate first for its input schema). Arguments are checked against the schema before the call.",
        Mode::Gateway => "Call a tool found with tool_browse: `tool_id` is its id, `args` its arguments. Arguments are checked against the tool's schema before the call. Returns a result envelope; a large result is stored as artifacts, listed with handles to read with tool_view.",
    };
    json!({
        "name": TOOL_EXECUTE,
        "description": description,
        "inputSchema": {
            "type": "object",
            "properties": {
                "tool_id": {"type": "string", "description": "The tool's id."},
                "args": {"type": "object", "description": "The tool's arguments."}
            },
            "required": ["tool_id"],
            "additionalProperties": false
        },
        "annotations": {"readOnlyHint": false, "destructiveHint": true, "openWorldHint": true}
    })
}

/// The MCP definition of `tool_view(handle, selector)` (§4.2, #34).
pub fn tool_view_definition() -> Value {
    json!({
        "name": TOOL_VIEW,
        "description": "Read a stored result of tool_execute a page at a time. `handle` is an artifact handle from its envelope; `selector` picks the part: `pointer` (a JSON pointer such as `/items/3`), `offset` and `limit` (array elements, object members or text characters). `{}` is the first page. Each page says `next_offset` when there is more.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "handle": {"type": "string", "description": "An artifact handle, such as `a1`."},
                "selector": {
                    "type": "object",
                    "properties": {
                        "pointer": {"type": "string", "description": "A JSON pointer into the artifact; empty for the whole."},
                        "offset": {"type": "integer", "minimum": 0},
                        "limit": {"type": "integer", "minimum": 1}
                    },
                    "additionalProperties": false
                }
            },
            "required": ["handle"],
            "additionalProperties": false
        },
        "annotations": {"readOnlyHint": true, "openWorldHint": false}
    })
}

/// The MCP definition of the proxy's `tool_hydrate(tool_id)` (§4.1, §4.3).
pub fn tool_hydrate_definition() -> Value {
    json!({
        "name": TOOL_HYDRATE,
        "description": "Get the input schema of a tool listed in tools/list, before calling it with tool_execute. `tool_id` is its name there (or its canonical id).",
        "inputSchema": {
            "type": "object",
            "properties": {
                "tool_id": {"type": "string", "description": "The tool's name or id."}
            },
            "required": ["tool_id"],
            "additionalProperties": false
        },
        "annotations": {"readOnlyHint": true, "openWorldHint": false}
    })
}
