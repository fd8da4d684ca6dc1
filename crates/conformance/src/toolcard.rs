//! The toolcard family: the gateway surface (tool ids, ChoiceCards, browse paths, query and
//! path browsing, cache-stable sessions, schema exposure and argument validation).
//!
//! | operation | fields | check |
//! |---|---|---|
//! | `parse-id` | `input` (text), `expected` (parts) or `expectedError` | parts equal, and formatting them gives `input` back |
//! | `format-id` | `input` (parts), `expected` (text) or `expectedError` | text equal, and parsing it gives `input` back |
//! | `derive-id` | `input` (an MCP tool), `server`?, `expected` `{tool_id, canonical_shape?}` or `expectedError` | id (and shape) equal |
//! | `truncate` | `input` (text), `budget`, `expected` (text) | bytes equal |
//! | `card` | `input` (an MCP tool), `server`?, `expected` `{text, tokens, json}` or `expectedError` | rendering, count and JSON form equal |
//! | `parse-path` | `input` (text), `expected` `{segments, wildcard}` or `expectedError` | equal |
//! | `catalog` | `tools`, `server`?, `expected` (ids, in order) or `expectedError`, `skipped`? | ids equal; the skipped tools match `skipped` (none when absent) |
//! | `discovery` | `tools`, `encoding` (`mcp`/`canonical`/`percent`), `expected` (entries) | equal |
//! | `mcp-name` | `input` (a tool_id), `expected` (its MCP name) | equal, and the name decodes back to `input` unless it was shortened |
//! | `from-mcp-name` | `input` (a name), `expected` (a tool_id) or `expectedError` | equal |
//! | `browse` | `tools`, `arguments`, `expected` `{text, ids, next_cursor, total}` or `expectedError` | the members given equal |
//! | `session` | `tools`, `cache_stable`, `steps` | every step as expected, in order, in one session |
//! | `validate-args` | `tools`, `tool_id`, `args`, `expected: "ok"` or `expectedError` | equal |
//! | `gateway` | `mode` (`gateway`/`proxy`), `servers` (name → tools/list), `cache_stable`?, `firewall`?, `steps` | every step's outcome matches its `expected`, in order, in one gateway |
//!
//! Parts are `{namespace, name, version, hash8}` with `null` for an absent version or hash.
//! A catalog's `skipped` is an array with one object per tool the catalog could not take, in
//! the order the tools were added, each matched as a subset of the codec's report
//! `{server, upstream_name, tool_id, pointer, error}` (`error` being the §3.4 object).
//! An `expectedError` is a JSON object matched as a **subset** of the error object of spec
//! §3.4 that the codec returns (`{"error", "message", "path", "details"}`): every member it
//! names must be there with an equal value (recursively for objects), so a fixture pins the
//! code and, where it matters, the offset, path or message. A session step is
//! `{"browse": <arguments>, ...}` or `{"hydrate": "<tool_id>", ...}` with the step's own
//! `expected` or `expectedError`. A browse result is `{ids, scores, text, tokens, next_cursor,
//! total}` (`scores` holds each card's score or `null`) and is compared on the members the
//! fixture names; a hydrate result is the hydration object
//! `{tool_id, upstream_name, server?, input_schema}`.
//!
//! A `gateway` fixture drives the proxy or gateway surface of spec §4 as an MCP runtime
//! would. `firewall` may set `budget`, `summary_budget` and `view_budget` (tokens). A step is
//! one of `{"list": true}` (the `tools/list` result), `{"call": name, "arguments": {...}}` (a
//! `tools/call`), `{"complete": <upstream CallToolResult>}` or `{"fail": {"error": {"code",
//! "message"}} | {"timeout_ms": n} | {"unavailable": "message"}}` (the outcome of the last
//! upstream call), `{"refresh": server, "tools": <tools/list>}` (an upstream's tools changed).
//! A call's outcome is `{"reply": {"isError", "text", "json"}}` (`json` is the text parsed,
//! when it is JSON) or `{"upstream": {"tool_id", "server", "name", "arguments"}}`; a refresh's
//! is `{"list_changed", "skipped"}` (the number of tools skipped). `expected` is matched as a
//! pattern: objects by the members it names, arrays element by element (same length),
//! anything else exactly.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::compare::json_eq;
use crate::{same_json, same_text, Case, Failure, Fixture, Harness, Suite};

/// A codec's error: the error object of spec §3.4.
pub type ErrorObject = Value;

/// One toolcard fixture's operation and fields.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub enum ToolcardCase {
    /// Parse a tool_id.
    #[serde(rename = "parse-id")]
    ParseId {
        /// The id text.
        input: String,
        /// Expected outcome.
        #[serde(flatten)]
        outcome: Outcome,
    },
    /// Format tool_id parts.
    #[serde(rename = "format-id")]
    FormatId {
        /// `{namespace, name, version, hash8}`.
        input: Value,
        /// Expected outcome.
        #[serde(flatten)]
        outcome: Outcome,
    },
    /// Derive the tool_id of an MCP tool definition.
    #[serde(rename = "derive-id")]
    DeriveId {
        /// The MCP tool.
        input: Value,
        /// The upstream server name, if any.
        #[serde(default)]
        server: Option<String>,
        /// Expected outcome.
        #[serde(flatten)]
        outcome: Outcome,
    },
    /// Truncate a description.
    #[serde(rename = "truncate")]
    Truncate {
        /// The description.
        input: String,
        /// The token budget.
        budget: usize,
        /// The truncated description.
        expected: String,
    },
    /// Build and render a tool's card.
    #[serde(rename = "card")]
    Card {
        /// The MCP tool.
        input: Value,
        /// The upstream server name, if any.
        #[serde(default)]
        server: Option<String>,
        /// Expected outcome.
        #[serde(flatten)]
        outcome: Outcome,
    },
    /// Parse a browse path.
    #[serde(rename = "parse-path")]
    ParsePath {
        /// The path.
        input: String,
        /// Expected outcome.
        #[serde(flatten)]
        outcome: Outcome,
    },
    /// Build a catalog.
    #[serde(rename = "catalog")]
    Catalog {
        /// A tools/list result.
        tools: Value,
        /// The upstream server name, if any.
        #[serde(default)]
        server: Option<String>,
        /// The tools the catalog skips, each matched as a subset of the codec's report.
        #[serde(default)]
        skipped: Vec<Value>,
        /// Expected outcome.
        #[serde(flatten)]
        outcome: Outcome,
    },
    /// The MCP-safe name of a tool_id.
    #[serde(rename = "mcp-name")]
    McpName {
        /// The tool_id.
        input: String,
        /// Its MCP name.
        expected: String,
    },
    /// The tool_id of an MCP-safe name.
    #[serde(rename = "from-mcp-name")]
    FromMcpName {
        /// The name.
        input: String,
        /// Expected outcome.
        #[serde(flatten)]
        outcome: Outcome,
    },
    /// The proxy's stripped tools/list.
    #[serde(rename = "discovery")]
    Discovery {
        /// A tools/list result.
        tools: Value,
        /// `canonical` or `percent`.
        encoding: String,
        /// The entries.
        expected: Value,
    },
    /// One stateless tool_browse call.
    #[serde(rename = "browse")]
    Browse {
        /// A tools/list result.
        tools: Value,
        /// The tool_browse arguments.
        arguments: Value,
        /// Expected outcome.
        #[serde(flatten)]
        outcome: Outcome,
    },
    /// A sequence of calls in one session.
    #[serde(rename = "session")]
    Session {
        /// A tools/list result.
        tools: Value,
        /// Whether the session is cache-stable.
        cache_stable: bool,
        /// The calls.
        steps: Vec<Step>,
    },
    /// Drive a proxy or gateway through a sequence of MCP calls.
    #[serde(rename = "gateway")]
    Gateway {
        /// `gateway` or `proxy`.
        mode: String,
        /// Upstream server name → its tools/list result.
        servers: Map<String, Value>,
        /// Whether browsing is cache-stable.
        #[serde(default)]
        cache_stable: bool,
        /// Firewall budgets: `budget`, `summary_budget`, `view_budget`.
        #[serde(default)]
        firewall: Map<String, Value>,
        /// The calls.
        steps: Vec<GatewayStep>,
    },
    /// Validate tool arguments.
    #[serde(rename = "validate-args")]
    ValidateArgs {
        /// A tools/list result.
        tools: Value,
        /// The tool.
        tool_id: String,
        /// The arguments.
        args: Value,
        /// Expected outcome (`"ok"` on success).
        #[serde(flatten)]
        outcome: Outcome,
    },
}

/// The expected outcome of an operation: a value or an error.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Outcome {
    /// The expected value.
    #[serde(default)]
    pub expected: Option<Value>,
    /// The expected error, matched as a subset of the §3.4 error object.
    #[serde(default, rename = "expectedError")]
    pub expected_error: Option<Value>,
}

/// One call of a `session` fixture.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// tool_browse arguments.
    #[serde(default)]
    pub browse: Option<Value>,
    /// A tool_id to hydrate.
    #[serde(default)]
    pub hydrate: Option<String>,
    /// Expected outcome.
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// One step of a `gateway` fixture.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GatewayStep {
    /// `true`: ask for `tools/list`.
    #[serde(default)]
    pub list: bool,
    /// A `tools/call` of this name...
    #[serde(default)]
    pub call: Option<String>,
    /// ...with these arguments.
    #[serde(default)]
    pub arguments: Option<Value>,
    /// The upstream result of the last upstream call.
    #[serde(default)]
    pub complete: Option<Value>,
    /// The failure of the last upstream call.
    #[serde(default)]
    pub fail: Option<Value>,
    /// An upstream whose tools changed...
    #[serde(default)]
    pub refresh: Option<String>,
    /// ...to these.
    #[serde(default)]
    pub tools: Option<Value>,
    /// The expected outcome, matched as a pattern.
    pub expected: Value,
}

/// One step of a gateway run, as the codec sees it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum GatewayCall {
    /// `tools/list`.
    List,
    /// `tools/call` of a name with arguments.
    Call(String, Value),
    /// The upstream's `CallToolResult` for the last upstream call.
    Complete(Value),
    /// The last upstream call failed: `{"error": {"code", "message"}}`, `{"timeout_ms": n}`
    /// or `{"unavailable": "message"}`.
    Fail(Value),
    /// An upstream's tools changed to this tools/list result.
    Refresh(String, Value),
}

/// The settings of a gateway run.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct GatewaySetup {
    /// `gateway` or `proxy`.
    pub mode: String,
    /// Upstream server name → its tools/list result, in the fixture's order.
    pub servers: Vec<(String, Value)>,
    /// Whether browsing is cache-stable.
    pub cache_stable: bool,
    /// Firewall budgets by name.
    pub firewall: Map<String, Value>,
}

/// One call of a session, as the codec sees it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SessionCall {
    /// tool_browse with these arguments.
    Browse(Value),
    /// tool_hydrate of this id.
    Hydrate(String),
}

impl Case for ToolcardCase {
    fn operation(&self) -> &'static str {
        match self {
            ToolcardCase::ParseId { .. } => "parse-id",
            ToolcardCase::FormatId { .. } => "format-id",
            ToolcardCase::DeriveId { .. } => "derive-id",
            ToolcardCase::Truncate { .. } => "truncate",
            ToolcardCase::Card { .. } => "card",
            ToolcardCase::ParsePath { .. } => "parse-path",
            ToolcardCase::Catalog { .. } => "catalog",
            ToolcardCase::McpName { .. } => "mcp-name",
            ToolcardCase::FromMcpName { .. } => "from-mcp-name",
            ToolcardCase::Discovery { .. } => "discovery",
            ToolcardCase::Browse { .. } => "browse",
            ToolcardCase::Session { .. } => "session",
            ToolcardCase::ValidateArgs { .. } => "validate-args",
            ToolcardCase::Gateway { .. } => "gateway",
        }
    }
}

/// What a gateway-surface implementation must offer the runner. Every error is the §3.4
/// error object.
pub trait ToolcardCodec: Send + Sync {
    /// Parses a tool_id into `{namespace, name, version, hash8}`.
    fn parse_id(&self, id: &str) -> Result<Value, ErrorObject>;
    /// Formats `{namespace, name, version, hash8}` into a tool_id.
    fn format_id(&self, parts: &Value) -> Result<String, ErrorObject>;
    /// Derives `{tool_id, canonical_shape}` (`canonical_shape` only when the id has a hash).
    fn derive_id(&self, tool: &Value, server: Option<&str>) -> Result<Value, ErrorObject>;
    /// Truncates a description to a token budget (§2.4).
    fn truncate(&self, text: &str, budget: usize) -> String;
    /// The card of one tool: `{text, tokens, json}`.
    fn card(&self, tool: &Value, server: Option<&str>) -> Result<Value, ErrorObject>;
    /// Parses a browse path into `{segments, wildcard}`.
    fn parse_path(&self, path: &str) -> Result<Value, ErrorObject>;
    /// Builds a catalog: `{ids, skipped}`, its tool_ids in order and the report of each tool
    /// it skipped, `{server, upstream_name, tool_id, pointer, error}`.
    fn catalog(&self, tools: &Value, server: Option<&str>) -> Result<Value, ErrorObject>;
    /// The stripped tools/list of the transparent proxy, names encoded as `encoding` says
    /// (`mcp`, `canonical` or `percent`).
    fn discovery(&self, tools: &Value, encoding: &str) -> Result<Value, ErrorObject>;
    /// The MCP-safe name of a tool_id.
    fn mcp_name(&self, id: &str) -> Result<String, ErrorObject>;
    /// The tool_id of an MCP-safe name.
    fn decode_mcp_name(&self, name: &str) -> Result<String, ErrorObject>;
    /// Runs calls in one session over a catalog; the outer error is a catalog failure. A
    /// browse result is `{ids, scores, text, tokens, next_cursor, total}`; a hydrate result is the hydration
    /// object.
    fn session(
        &self,
        tools: &Value,
        cache_stable: bool,
        calls: &[SessionCall],
    ) -> Result<Vec<Result<Value, ErrorObject>>, ErrorObject>;
    /// Validates arguments against a tool's input schema.
    fn validate_args(&self, tools: &Value, tool_id: &str, args: &Value) -> Result<(), ErrorObject>;
    /// Runs a proxy or gateway through `calls`; one outcome per call (see the module docs).
    /// The outer error is a setup failure.
    fn gateway(
        &self,
        setup: &GatewaySetup,
        calls: &[GatewayCall],
    ) -> Result<Vec<Value>, ErrorObject>;
}

/// A harness that checks toolcard fixtures against `codec`.
pub fn harness(codec: impl ToolcardCodec + 'static) -> Harness<ToolcardCase> {
    Harness::new(move |fixture, _suite| check(&codec, fixture))
}

/// Our own suite, `conformance/toolcard`.
pub fn suite(workspace_root: &std::path::Path) -> Suite {
    Suite::new("toolcard", workspace_root.join("conformance/toolcard"))
        .expected_failures(workspace_root.join("conformance/toolcard.expected-failures"))
}

/// Checks one toolcard fixture.
pub fn check(codec: &dyn ToolcardCodec, fixture: &Fixture<ToolcardCase>) -> Result<(), Failure> {
    match &fixture.case {
        ToolcardCase::ParseId { input, outcome } => {
            let result = codec.parse_id(input);
            if let Ok(parts) = &result {
                let back = codec.format_id(parts).map_err(|e| {
                    Failure::new(format!("formatting the parsed parts failed: {e}"))
                })?;
                same_text("format(parse(input))", input, &back)?;
            }
            expect("parse-id", outcome, result)
        }
        ToolcardCase::FormatId { input, outcome } => {
            let result = codec.format_id(input);
            if let Ok(text) = &result {
                let back = codec
                    .parse_id(text)
                    .map_err(|e| Failure::new(format!("parsing the formatted id failed: {e}")))?;
                same_json("parse(format(input))", input, &back)?;
            }
            expect("format-id", outcome, result.map(Value::String))
        }
        ToolcardCase::DeriveId {
            input,
            server,
            outcome,
        } => expect(
            "derive-id",
            outcome,
            codec.derive_id(input, server.as_deref()),
        ),
        ToolcardCase::Truncate {
            input,
            budget,
            expected,
        } => same_text("truncate", expected, &codec.truncate(input, *budget)),
        ToolcardCase::Card {
            input,
            server,
            outcome,
        } => expect("card", outcome, codec.card(input, server.as_deref())),
        ToolcardCase::ParsePath { input, outcome } => {
            expect("parse-path", outcome, codec.parse_path(input))
        }
        ToolcardCase::Catalog {
            tools,
            server,
            skipped,
            outcome,
        } => {
            let result = codec.catalog(tools, server.as_deref());
            if let Ok(built) = &result {
                let empty = Vec::new();
                let actual = built
                    .get("skipped")
                    .and_then(Value::as_array)
                    .unwrap_or(&empty);
                let matches = actual.len() == skipped.len()
                    && skipped.iter().zip(actual).all(|(e, a)| json_subset(e, a));
                if !matches {
                    return Err(Failure::json_mismatch(
                        "catalog skipped (each expected report must be a subset)",
                        &Value::Array(skipped.clone()),
                        &Value::Array(actual.clone()),
                    ));
                }
            }
            expect(
                "catalog",
                outcome,
                result.map(|built| built.get("ids").cloned().unwrap_or(Value::Null)),
            )
        }
        ToolcardCase::McpName { input, expected } => {
            let name = codec
                .mcp_name(input)
                .map_err(|e| Failure::new(format!("mcp-name failed: {e}")))?;
            same_text("mcp-name", expected, &name)?;
            let shortened = name.len() == 128 && name.get(118..120) == Some(".z");
            match codec.decode_mcp_name(&name) {
                Ok(back) if !shortened => same_text("from-mcp-name(mcp-name(input))", input, &back),
                Err(_) if shortened => Ok(()),
                Ok(back) => Err(Failure::new(format!(
                    "the shortened name {name} decodes to {back}; it must not decode without its catalog"
                ))),
                Err(e) => Err(Failure::new(format!("the name {name} does not decode: {e}"))),
            }
        }
        ToolcardCase::FromMcpName { input, outcome } => expect(
            "from-mcp-name",
            outcome,
            codec.decode_mcp_name(input).map(Value::String),
        ),
        ToolcardCase::Discovery {
            tools,
            encoding,
            expected,
        } => {
            if !matches!(encoding.as_str(), "mcp" | "canonical" | "percent") {
                return Err(Failure::new(format!(
                    "fixture: unknown encoding `{encoding}` (mcp, canonical or percent)"
                )));
            }
            let actual = codec
                .discovery(tools, encoding)
                .map_err(|e| Failure::new(format!("discovery failed: {e}")))?;
            same_json("discovery", expected, &actual)
        }
        ToolcardCase::Browse {
            tools,
            arguments,
            outcome,
        } => {
            let mut results = codec
                .session(tools, false, &[SessionCall::Browse(arguments.clone())])
                .map_err(|e| Failure::new(format!("building the catalog failed: {e}")))?;
            let result = results
                .pop()
                .ok_or_else(|| Failure::new("the session returned no result"))?;
            expect_browse("browse", outcome, result)
        }
        ToolcardCase::Session {
            tools,
            cache_stable,
            steps,
        } => {
            let mut calls = Vec::with_capacity(steps.len());
            for (i, step) in steps.iter().enumerate() {
                calls.push(match (&step.browse, &step.hydrate) {
                    (Some(args), None) => SessionCall::Browse(args.clone()),
                    (None, Some(id)) => SessionCall::Hydrate(id.clone()),
                    _ => {
                        return Err(Failure::new(format!(
                            "fixture: step {} needs exactly one of `browse` and `hydrate`",
                            i + 1
                        )))
                    }
                });
            }
            let results = codec
                .session(tools, *cache_stable, &calls)
                .map_err(|e| Failure::new(format!("building the catalog failed: {e}")))?;
            if results.len() != steps.len() {
                return Err(Failure::new(format!(
                    "the session returned {} results for {} steps",
                    results.len(),
                    steps.len()
                )));
            }
            for (i, (step, result)) in steps.iter().zip(results).enumerate() {
                let what = format!("step {}", i + 1);
                if step.browse.is_some() {
                    expect_browse(&what, &step.outcome, result)?;
                } else {
                    expect(&what, &step.outcome, result)?;
                }
            }
            Ok(())
        }
        ToolcardCase::Gateway {
            mode,
            servers,
            cache_stable,
            firewall,
            steps,
        } => {
            let mut calls = Vec::with_capacity(steps.len());
            for (i, step) in steps.iter().enumerate() {
                let given = [
                    step.list,
                    step.call.is_some(),
                    step.complete.is_some(),
                    step.fail.is_some(),
                    step.refresh.is_some(),
                ];
                if given.iter().filter(|g| **g).count() != 1 {
                    return Err(Failure::new(format!(
                        "fixture: step {} needs exactly one of `list`, `call`, `complete`, `fail`, `refresh`",
                        i + 1
                    )));
                }
                calls.push(if step.list {
                    GatewayCall::List
                } else if let Some(name) = &step.call {
                    GatewayCall::Call(
                        name.clone(),
                        step.arguments.clone().unwrap_or(Value::Object(Map::new())),
                    )
                } else if let Some(result) = &step.complete {
                    GatewayCall::Complete(result.clone())
                } else if let Some(failure) = &step.fail {
                    GatewayCall::Fail(failure.clone())
                } else {
                    GatewayCall::Refresh(
                        step.refresh.clone().unwrap_or_default(),
                        step.tools.clone().unwrap_or(Value::Array(Vec::new())),
                    )
                });
            }
            let setup = GatewaySetup {
                mode: mode.clone(),
                servers: servers
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
                cache_stable: *cache_stable,
                firewall: firewall.clone(),
            };
            let outcomes = codec
                .gateway(&setup, &calls)
                .map_err(|e| Failure::new(format!("setting up the gateway failed: {e}")))?;
            if outcomes.len() != steps.len() {
                return Err(Failure::new(format!(
                    "the gateway returned {} outcomes for {} steps",
                    outcomes.len(),
                    steps.len()
                )));
            }
            for (i, (step, outcome)) in steps.iter().zip(&outcomes).enumerate() {
                if !json_match(&step.expected, outcome) {
                    return Err(Failure::json_mismatch(
                        &format!("step {} (the expected pattern must match)", i + 1),
                        &step.expected,
                        outcome,
                    ));
                }
            }
            Ok(())
        }
        ToolcardCase::ValidateArgs {
            tools,
            tool_id,
            args,
            outcome,
        } => expect(
            "validate-args",
            outcome,
            codec
                .validate_args(tools, tool_id, args)
                .map(|()| Value::String("ok".into())),
        ),
    }
}

/// A browse result is compared on the members the fixture gives (`ids`, and `text` when
/// present).
fn expect_browse(
    what: &str,
    outcome: &Outcome,
    result: Result<Value, ErrorObject>,
) -> Result<(), Failure> {
    match (&outcome.expected, &outcome.expected_error) {
        (Some(Value::Object(expected)), None) => {
            let actual = result.map_err(|e| {
                Failure::new(format!(
                    "{what} failed, but the fixture expects a result\nerror: {e}"
                ))
            })?;
            for (key, value) in expected {
                let got = actual
                    .get(key)
                    .ok_or_else(|| Failure::new(format!("{what}: the result has no `{key}`")))?;
                match (value, got) {
                    (Value::String(e), Value::String(a)) => {
                        same_text(&format!("{what} {key}"), e, a)?;
                    }
                    _ => same_json(&format!("{what} {key}"), value, got)?,
                }
            }
            Ok(())
        }
        (None, Some(_)) => expect(what, outcome, result),
        _ => Err(Failure::new(format!(
            "fixture: {what} needs `expected: {{ids, text?}}` or `expectedError`"
        ))),
    }
}

/// Compares a result with the fixture's `expected` or `expectedError`.
fn expect(
    what: &str,
    outcome: &Outcome,
    result: Result<Value, ErrorObject>,
) -> Result<(), Failure> {
    match (&outcome.expected, &outcome.expected_error, result) {
        (Some(expected), None, Ok(actual)) => match (expected, &actual) {
            (Value::String(e), Value::String(a)) => same_text(what, e, a),
            _ => same_json(what, expected, &actual),
        },
        (None, Some(expected), Err(actual)) => {
            if json_subset(expected, &actual) {
                Ok(())
            } else {
                Err(Failure::json_mismatch(
                    &format!("{what} error (expected members must be present and equal)"),
                    expected,
                    &actual,
                ))
            }
        }
        (Some(expected), None, Err(actual)) => Err(Failure::new(format!(
            "{what} failed, but the fixture expects {expected}\nerror: {actual}"
        ))),
        (None, Some(expected), Ok(actual)) => Err(Failure::new(format!(
            "{what} succeeded with {actual}, but the fixture expects the error {expected}"
        ))),
        _ => Err(Failure::new(
            "fixture: give exactly one of `expected` and `expectedError`",
        )),
    }
}

/// Whether every member of `expected` is in `actual` with an equal value (objects are
/// compared recursively as subsets; everything else exactly).
fn json_subset(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => e
            .iter()
            .all(|(k, v)| a.get(k).is_some_and(|av| json_subset(v, av))),
        _ => json_eq(expected, actual),
    }
}

/// Whether `actual` matches the pattern `expected`: objects by the members the pattern names
/// (recursively), arrays element by element with the same length, anything else exactly.
fn json_match(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => e
            .iter()
            .all(|(k, v)| a.get(k).is_some_and(|av| json_match(v, av))),
        (Value::Array(e), Value::Array(a)) => {
            e.len() == a.len() && e.iter().zip(a).all(|(e, a)| json_match(e, a))
        }
        _ => json_eq(expected, actual),
    }
}

/// An object from members, for adapters.
pub fn object<const N: usize>(members: [(&str, Value); N]) -> Value {
    Value::Object(
        members
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect::<Map<String, Value>>(),
    )
}
