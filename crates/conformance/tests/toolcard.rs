//! Replays `conformance/toolcard` against `agentwire-toolcard`.
//!
//! Run one area with `cargo test -p agentwire-conformance --test toolcard -- browse/`.

use agentwire_conformance::find_workspace_root;
use agentwire_conformance::toolcard::{self, object, ErrorObject, SessionCall, ToolcardCodec};
use agentwire_toolcard::{
    format_tool_id, parse_path, parse_tool_id, truncate_description, BrowseRequest, Catalog,
    CatalogBuilder, Error, NameEncoding, Session, ToolDefinition, ToolId, ToolIdParts,
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

    fn from_mcp_name(&self, name: &str) -> Result<String, ErrorObject> {
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

    fn validate_args(&self, tools: &Value, tool_id: &str, args: &Value) -> Result<(), ErrorObject> {
        let catalog = catalog(tools, None)?;
        catalog.validate_args(tool_id, args).map_err(|e| err(&e))
    }
}

fn main() {
    let root = find_workspace_root(env!("CARGO_MANIFEST_DIR").as_ref())
        .expect("the conformance crate lives inside the agentwire workspace");
    toolcard::harness(AgentwireToolcard)
        .suite(toolcard::suite(&root))
        .run()
}
