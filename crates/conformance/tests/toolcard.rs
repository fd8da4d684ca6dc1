//! Replays `conformance/toolcard` against `agentwire-toolcard`.
//!
//! Run one area with `cargo test -p agentwire-conformance --test toolcard -- browse/`.

use agentwire_conformance::find_workspace_root;
use std::sync::Arc;
use std::time::Duration;

use agentwire_conformance::toolcard::{
    self, object, ErrorObject, GatewayCall, GatewaySetup, SessionCall, ToolcardCodec,
};
use agentwire_toolcard::{
    format_tool_id, parse_path, parse_tool_id, truncate_description, BrowseRequest, Catalog,
    CatalogBuilder, Dispatch, Error, FirewallOptions, Gateway, GatewayOptions, Mode, NameEncoding,
    Session, ToolDefinition, ToolId, ToolIdParts, UpstreamCall, UpstreamFailure,
};
use serde_json::Value;

/// The adapter from the runner's JSON world to `agentwire-toolcard`.
struct AgentwireToolcard;

fn err(e: &Error) -> ErrorObject {
    // Through the fixed-order text, so the object is the same in every serde_json build.
    serde_json::from_str(&e.to_json_string()).unwrap_or_else(|_| e.to_json())
}

/// A value built with the default serde_json map, as the runner's own (ordered) value.
fn reparse(value: &Value) -> Value {
    serde_json::from_str(&value.to_string()).unwrap_or(Value::Null)
}

fn parts_json(parts: &ToolIdParts) -> Value {
    object([
        ("namespace", Value::String(parts.namespace.clone())),
        ("name", Value::String(parts.name.clone())),
        (
            "version",
            parts.version.clone().map_or(Value::Null, Value::String),
        ),
        (
            "hash8",
            parts.hash8.clone().map_or(Value::Null, Value::String),
        ),
    ])
}

fn catalog(tools: &Value, server: Option<&str>) -> Result<Catalog, ErrorObject> {
    let mut builder = CatalogBuilder::new();
    builder.add_tools_list(server, tools).map_err(|e| err(&e))?;
    builder.build().map_err(|e| err(&e))
}

impl ToolcardCodec for AgentwireToolcard {
    fn parse_id(&self, id: &str) -> Result<Value, ErrorObject> {
        parse_tool_id(id)
            .map(|p| parts_json(&p))
            .map_err(|e| err(&e))
    }

    fn format_id(&self, parts: &Value) -> Result<String, ErrorObject> {
        let field = |name: &str| parts.get(name).and_then(Value::as_str).map(str::to_owned);
        let parts = ToolIdParts {
            namespace: field("namespace").unwrap_or_default(),
            name: field("name").unwrap_or_default(),
            version: field("version"),
            hash8: field("hash8"),
        };
        format_tool_id(&parts).map_err(|e| err(&e))
    }

    fn derive_id(&self, tool: &Value, server: Option<&str>) -> Result<Value, ErrorObject> {
        let definition = ToolDefinition::from_json(tool).map_err(|e| err(&e))?;
        let id = definition.derive_id(server).map_err(|e| err(&e))?;
        let shape = match id.hash8() {
            Some(_) => Value::String(definition.canonical_shape().map_err(|e| err(&e))?),
            None => Value::Null,
        };
        Ok(object([
            ("tool_id", Value::String(id.to_string())),
            ("canonical_shape", shape),
        ]))
    }

    fn truncate(&self, text: &str, budget: usize) -> String {
        truncate_description(text, budget).into_owned()
    }

    fn card(&self, tool: &Value, server: Option<&str>) -> Result<Value, ErrorObject> {
        let catalog = catalog(&Value::Array(vec![tool.clone()]), server)?;
        let tool = catalog
            .tools()
            .next()
            .ok_or_else(|| Value::String("empty catalog".into()))?;
        let card = tool.card();
        let json: Value = serde_json::from_str(&serde_json::to_string(card).unwrap_or_default())
            .unwrap_or(Value::Null);
        Ok(object([
            ("text", Value::String(card.text().to_owned())),
            ("tokens", Value::from(card.tokens())),
            ("json", json),
        ]))
    }

    fn parse_path(&self, path: &str) -> Result<Value, ErrorObject> {
        let parsed = parse_path(path).map_err(|e| err(&e))?;
        Ok(object([
            (
                "segments",
                Value::Array(parsed.segments().map(|s| Value::String(s.into())).collect()),
            ),
            ("wildcard", Value::Bool(parsed.has_wildcard())),
        ]))
    }

    fn catalog(&self, tools: &Value, server: Option<&str>) -> Result<Value, ErrorObject> {
        let catalog = catalog(tools, server)?;
        Ok(object([
            (
                "ids",
                catalog
                    .tools()
                    .map(|t| Value::String(t.id().to_string()))
                    .collect(),
            ),
            (
                "skipped",
                catalog
                    .skipped()
                    .iter()
                    .map(|s| reparse(&s.to_json()))
                    .collect(),
            ),
        ]))
    }

    fn discovery(&self, tools: &Value, encoding: &str) -> Result<Value, ErrorObject> {
        let catalog = catalog(tools, None)?;
        let encoding = match encoding {
            "percent" => NameEncoding::PercentEncoded,
            "canonical" => NameEncoding::Canonical,
            _ => NameEncoding::Mcp,
        };
        let text = serde_json::to_string(&catalog.discovery(encoding)).unwrap_or_default();
        Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    fn mcp_name(&self, id: &str) -> Result<String, ErrorObject> {
        let id = ToolId::parse(id).map_err(|e| err(&e))?;
        Ok(id.to_mcp_name())
    }

    fn decode_mcp_name(&self, name: &str) -> Result<String, ErrorObject> {
        ToolId::from_mcp_name(name)
            .map(|id| id.to_string())
            .map_err(|e| err(&e))
    }

    fn session(
        &self,
        tools: &Value,
        cache_stable: bool,
        calls: &[SessionCall],
    ) -> Result<Vec<Result<Value, ErrorObject>>, ErrorObject> {
        let catalog = catalog(tools, None)?;
        let mut session = Session::new(&catalog).cache_stable(cache_stable);
        let mut results = Vec::new();
        for call in calls {
            results.push(match call {
                SessionCall::Browse(arguments) => session
                    .browse(&match BrowseRequest::from_arguments(arguments) {
                        Ok(request) => request,
                        Err(e) => {
                            results.push(Err(err(&e)));
                            continue;
                        }
                    })
                    .map(|response| {
                        object([
                            (
                                "ids",
                                Value::Array(
                                    response.ids().map(|id| Value::String(id.into())).collect(),
                                ),
                            ),
                            (
                                "scores",
                                Value::Array(
                                    response
                                        .cards()
                                        .iter()
                                        .map(|c| c.score().map_or(Value::Null, Value::from))
                                        .collect(),
                                ),
                            ),
                            ("text", Value::String(response.text().to_owned())),
                            ("tokens", Value::from(response.tokens())),
                            (
                                "next_cursor",
                                response
                                    .next_cursor()
                                    .map_or(Value::Null, |c| Value::String(c.into())),
                            ),
                            ("total", Value::from(response.total())),
                        ])
                    })
                    .map_err(|e| err(&e)),
                SessionCall::Hydrate(id) => session
                    .hydrate(id)
                    .map(|h| {
                        serde_json::from_str(&serde_json::to_string(&h).unwrap_or_default())
                            .unwrap_or(Value::Null)
                    })
                    .map_err(|e| err(&e)),
                _ => Err(Value::String("unsupported session call".into())),
            });
        }
        Ok(results)
    }

    fn gateway(
        &self,
        setup: &GatewaySetup,
        calls: &[GatewayCall],
    ) -> Result<Vec<Value>, ErrorObject> {
        run_gateway(setup, calls)
    }

    fn validate_args(&self, tools: &Value, tool_id: &str, args: &Value) -> Result<(), ErrorObject> {
        let catalog = catalog(tools, None)?;
        catalog.validate_args(tool_id, args).map_err(|e| err(&e))
    }
}

/// A `CallToolResult` as the fixtures see it: `{"reply": {"isError", "text", "json"}}`.
fn reply_outcome(result: &Value) -> Value {
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    let json = serde_json::from_str::<Value>(text).unwrap_or(Value::Null);
    object([(
        "reply",
        object([
            ("isError", result["isError"].clone()),
            ("text", Value::String(text.to_owned())),
            ("json", json),
        ]),
    )])
}

fn run_gateway(setup: &GatewaySetup, calls: &[GatewayCall]) -> Result<Vec<Value>, ErrorObject> {
    let mut builder = CatalogBuilder::new();
    for (server, list) in &setup.servers {
        builder
            .add_tools_list(Some(server), list)
            .map_err(|e| err(&e))?;
    }
    let catalog = Arc::new(builder.build().map_err(|e| err(&e))?);
    let mode = match setup.mode.as_str() {
        "proxy" => Mode::Proxy,
        "gateway" => Mode::Gateway,
        other => return Err(Value::String(format!("unknown mode {other}"))),
    };
    let budget = |name: &str, default: usize| {
        setup
            .firewall
            .get(name)
            .and_then(Value::as_u64)
            .map_or(default, |n| n as usize)
    };
    let defaults = FirewallOptions::default();
    let firewall = FirewallOptions::default()
        .budget(budget("budget", defaults.budget))
        .summary_budget(budget("summary_budget", defaults.summary_budget))
        .view_budget(budget("view_budget", defaults.view_budget));
    let options = GatewayOptions::new(mode)
        .cache_stable(setup.cache_stable)
        .firewall(firewall);
    let mut gateway = Gateway::new(catalog, options);
    let mut last: Option<UpstreamCall> = None;
    let mut outcomes = Vec::new();
    for call in calls {
        let outcome = match call {
            GatewayCall::List => gateway.tools_list(),
            GatewayCall::Call(name, arguments) => match gateway.call(name, arguments) {
                Dispatch::Reply(result) => reply_outcome(&result),
                Dispatch::Upstream(call) => {
                    let outcome = object([(
                        "upstream",
                        object([
                            ("tool_id", Value::String(call.tool_id.to_string())),
                            (
                                "server",
                                call.server.clone().map_or(Value::Null, Value::String),
                            ),
                            ("name", Value::String(call.upstream_name.clone())),
                            ("arguments", call.arguments.clone()),
                        ]),
                    )]);
                    last = Some(call);
                    outcome
                }
                _ => Value::String("unknown dispatch".into()),
            },
            GatewayCall::Complete(result) => match &last {
                Some(call) => reply_outcome(&gateway.complete(call, result)),
                None => Value::String("no upstream call to complete".into()),
            },
            GatewayCall::Fail(failure) => match &last {
                Some(call) => {
                    let failure = if let Some(ms) =
                        failure.get("timeout_ms").and_then(Value::as_u64)
                    {
                        UpstreamFailure::Timeout {
                            after: Some(Duration::from_millis(ms)),
                        }
                    } else if let Some(message) = failure.get("unavailable").and_then(Value::as_str)
                    {
                        UpstreamFailure::Unavailable {
                            message: message.to_owned(),
                        }
                    } else {
                        let error = &failure["error"];
                        UpstreamFailure::Error {
                            code: error["code"].as_i64(),
                            message: error["message"].as_str().unwrap_or_default().to_owned(),
                        }
                    };
                    reply_outcome(&gateway.fail(call, failure))
                }
                None => Value::String("no upstream call to fail".into()),
            },
            GatewayCall::Refresh(server, tools) => match gateway.refresh(server, tools) {
                Ok(refresh) => object([
                    ("list_changed", Value::Bool(refresh.list_changed)),
                    ("skipped", Value::from(refresh.skipped.len())),
                ]),
                Err(e) => err(&e),
            },
            _ => Value::String("unsupported gateway call".into()),
        };
        outcomes.push(outcome);
    }
    Ok(outcomes)
}

fn main() {
    let root = find_workspace_root(env!("CARGO_MANIFEST_DIR").as_ref())
        .expect("the conformance crate lives inside the agentwire workspace");
    toolcard::harness(AgentwireToolcard)
        .suite(toolcard::suite(&root))
        .run()
}
