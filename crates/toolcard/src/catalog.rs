//! The catalog: upstream tools keyed by tool_id, with their cards, graph, index and
//! validators; hydration, argument validation and the proxy's discovery list (spec §4).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{json, Value};

use crate::card::{CardKind, ChoiceCard, MAX_NAME_CHARS};
use crate::error::{args_invalid, clip, invalid_json, invalid_tool, Error, ErrorKind, Violation};
use crate::graph::{ChoiceGraph, LeafInput};
use crate::rank::{Fields, Index};
use crate::tool::ToolDefinition;
use crate::tool_id::ToolId;

/// The most schema violations reported by one [`Catalog::validate_args`] error.
pub const MAX_VIOLATIONS: usize = 32;

/// One upstream tool in a [`Catalog`].
#[derive(Debug)]
pub struct CatalogTool {
    id: ToolId,
    server: Option<String>,
    definition: ToolDefinition,
    card: ChoiceCard,
    validator: Option<Result<jsonschema::Validator, String>>,
}

impl CatalogTool {
    /// The tool_id.
    pub fn id(&self) -> &ToolId {
        &self.id
    }

    /// The upstream server name given when the tool was added.
    pub fn server(&self) -> Option<&str> {
        self.server.as_deref()
    }

    /// The upstream name: what `tools/call` must send upstream.
    pub fn upstream_name(&self) -> &str {
        self.definition.name()
    }

    /// The upstream definition.
    pub fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    /// The tool's card (without a score).
    pub fn card(&self) -> &ChoiceCard {
        &self.card
    }

    /// The real input schema (§4.3), if the upstream declared one.
    pub fn input_schema(&self) -> Option<&Value> {
        self.definition.input_schema()
    }
}

/// What `tool_hydrate` returns (§4.3): the tool_id, the upstream name and server, and the
/// real input schema (`null` when the upstream declared none).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Hydration<'a> {
    /// The tool_id.
    pub tool_id: &'a ToolId,
    /// The upstream name.
    pub upstream_name: &'a str,
    /// The upstream server, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<&'a str>,
    /// The input schema.
    pub input_schema: Option<&'a Value>,
}

/// How a discovery entry names its tool (§4.1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NameEncoding {
    /// The canonical tool_id (`github:create_issue@1.4.0`).
    #[default]
    Canonical,
    /// The tool_id percent-encoded for strict clients (`github%3Acreate_issue%401.4.0`);
    /// decode with [`ToolId::from_percent_encoded`].
    PercentEncoded,
}

/// One stripped `tools/list` entry of the transparent proxy (§4.1): serializes as
/// `{"name", "description", "inputSchema": {"type": "object"}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiscoveryEntry {
    /// The tool_id, possibly percent-encoded.
    pub name: String,
    /// The card's description: one line, truncated by §2.4.
    pub description: String,
    /// Always `{"type": "object"}`, a sentinel without properties.
    #[serde(rename = "inputSchema")]
    pub input_schema: Value,
}

/// A tool catalog: every upstream tool under its tool_id, ready to browse, hydrate and
/// validate against. Immutable once built; share it between sessions with `Arc`.
///
/// ```
/// use agentwire_toolcard::Catalog;
/// use serde_json::json;
///
/// let catalog = Catalog::from_tools_list(&json!({"tools": [
///     {"name": "github.create_issue", "description": "Create an issue.",
///      "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}},
///                      "required": ["title"]},
///      "_meta": {"version": "1.4.0"}},
///     {"name": "read_file", "description": "Read a file.",
///      "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}},
///                      "required": ["path"]},
///      "annotations": {"readOnlyHint": true}}
/// ]}))?;
/// let ids: Vec<&str> = catalog.tools().map(|t| t.id().as_str()).collect();
/// assert_eq!(ids, ["github:create_issue@1.4.0", "mcp:read_file#85b56782"]);
///
/// let schema = catalog.hydrate("mcp:read_file#85b56782")?.input_schema;
/// assert_eq!(schema.unwrap()["required"], json!(["path"]));
///
/// let error = catalog.validate_args("github:create_issue@1.4.0", &json!({})).unwrap_err();
/// assert_eq!(error.code().as_str(), "ARGS_INVALID");
/// assert_eq!(error.to_string(), "arguments do not match the input schema of github:create_issue@1.4.0: \"title\" is a required property");
/// # Ok::<(), agentwire_toolcard::Error>(())
/// ```
#[derive(Debug)]
pub struct Catalog {
    tools: Vec<CatalogTool>,
    graph: ChoiceGraph,
    index: Index,
}

/// Collects upstream tools, from one or more servers, into a [`Catalog`].
#[derive(Debug, Default)]
pub struct CatalogBuilder {
    entries: Vec<Entry>,
}

#[derive(Debug)]
struct Entry {
    definition: ToolDefinition,
    server: Option<String>,
    pointer: String,
}

impl CatalogBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one tool. With `server`, the namespace is the server name (lower-cased) and the
    /// tool name is kept verbatim; without it the namespace is inferred from the tool name.
    pub fn add_tool(&mut self, server: Option<&str>, definition: ToolDefinition) -> &mut Self {
        let pointer = String::new();
        self.entries.push(Entry {
            definition,
            server: server.map(str::to_owned),
            pointer,
        });
        self
    }

    /// Adds every tool of a `tools/list` result: `{"tools": [...]}`, a whole JSON-RPC response
    /// `{"result": {"tools": [...]}}`, or a bare array of tools. Other members (such as
    /// `nextCursor`) are ignored. Errors point into the document (`/tools/3/name`).
    pub fn add_tools_list(
        &mut self,
        server: Option<&str>,
        list: &Value,
    ) -> Result<&mut Self, Error> {
        let (tools, prefix) = tools_array(list)?;
        for (i, tool) in tools.iter().enumerate() {
            let pointer = format!("{prefix}/{i}");
            let definition = ToolDefinition::from_json_at(tool, &pointer)?;
            self.entries.push(Entry {
                definition,
                server: server.map(str::to_owned),
                pointer,
            });
        }
        Ok(self)
    }

    /// Like [`CatalogBuilder::add_tools_list`], from JSON text; a syntax error carries its
    /// line and column.
    pub fn add_tools_list_str(
        &mut self,
        server: Option<&str>,
        text: &str,
    ) -> Result<&mut Self, Error> {
        let value: Value = serde_json::from_str(text).map_err(|e| invalid_json(&e))?;
        self.add_tools_list(server, &value)
    }

    /// Derives every tool_id, builds every card, and checks for collisions (§1.5).
    ///
    /// Fails on the first tool whose id cannot be formed, whose card is over the hard cap, or
    /// whose id another tool already has: nothing is dropped silently.
    pub fn build(self) -> Result<Catalog, Error> {
        let mut tools = Vec::with_capacity(self.entries.len());
        for entry in self.entries {
            let id = entry
                .definition
                .derive_id_at(entry.server.as_deref(), &entry.pointer)?;
            let card = tool_card(&id, &entry.definition)?;
            tools.push(CatalogTool {
                id,
                server: entry.server,
                definition: entry.definition,
                card,
                validator: None,
            });
        }
        // Stable: among equal ids the first registered stays first.
        tools.sort_by(|a, b| a.id.cmp(&b.id));
        if let Some(pair) = tools.windows(2).find(|w| w[0].id == w[1].id) {
            return Err(Error::new(ErrorKind::Collision {
                tool_id: pair[0].id.to_string(),
                first: pair[0].upstream_name().to_owned(),
                second: pair[1].upstream_name().to_owned(),
            }));
        }
        for tool in &mut tools {
            tool.validator = tool
                .definition
                .input_schema()
                .map(|schema| jsonschema::validator_for(schema).map_err(|e| e.to_string()));
        }
        let leaves: Vec<LeafInput<'_>> = tools
            .iter()
            .map(|t| LeafInput {
                namespace: t.id.namespace(),
                name: t.id.name(),
            })
            .collect();
        let graph = ChoiceGraph::build(&leaves)?;
        let index = build_index(&tools);
        Ok(Catalog {
            tools,
            graph,
            index,
        })
    }
}

fn build_index(tools: &[CatalogTool]) -> Index {
    let names: Vec<[&str; 3]> = tools
        .iter()
        .map(|t| {
            [
                t.id.namespace(),
                t.id.name(),
                t.definition.title().unwrap_or(""),
            ]
        })
        .collect();
    Index::build(tools.iter().zip(&names).map(|(t, name)| Fields {
        name,
        description: t.definition.description(),
        tags: t.card.tags(),
    }))
}

fn tools_array(list: &Value) -> Result<(&Vec<Value>, &'static str), Error> {
    let not_a_list = || {
        invalid_tool(
            String::new(),
            None,
            "expected a tools/list result: {\"tools\": [...]}, a JSON-RPC response with one, or an array of tools".into(),
        )
    };
    match list {
        Value::Array(tools) => Ok((tools, "")),
        Value::Object(map) => {
            if let Some(tools) = map.get("tools") {
                return tools.as_array().map(|t| (t, "/tools")).ok_or_else(|| {
                    invalid_tool("/tools".into(), None, "`tools` is not an array".into())
                });
            }
            match map.get("result").and_then(|r| r.get("tools")) {
                Some(Value::Array(tools)) => Ok((tools, "/result/tools")),
                Some(_) => Err(invalid_tool(
                    "/result/tools".into(),
                    None,
                    "`tools` is not an array".into(),
                )),
                None => Err(not_a_list()),
            }
        }
        _ => Err(not_a_list()),
    }
}

/// The card of an upstream tool.
///
/// name: the title (`title`, else `annotations.title`), one line, cut to 63 characters and
/// `…` when longer than 64; without a title the default (the tool_id name). Tags:
/// `read-only` for `readOnlyHint`; otherwise `destructive` and `idempotent` for those hints;
/// `open-world` for an explicit `openWorldHint: true`. `side_effects` is `!readOnlyHint`
/// (MCP's default for a tool without annotations is "may modify its environment").
fn tool_card(id: &ToolId, definition: &ToolDefinition) -> Result<ChoiceCard, Error> {
    let annotations = definition.annotations();
    let read_only = annotations.read_only == Some(true);
    let mut tags = Vec::new();
    if read_only {
        tags.push("read-only");
    } else {
        if annotations.destructive == Some(true) {
            tags.push("destructive");
        }
        if annotations.idempotent == Some(true) {
            tags.push("idempotent");
        }
    }
    if annotations.open_world == Some(true) {
        tags.push("open-world");
    }
    let mut builder = ChoiceCard::builder(id.as_str(), CardKind::Tool)
        .namespace(id.namespace())
        .description(definition.description())
        .tags(tags)
        .has_schema(definition.input_schema().is_some())
        .cost_hint(annotations.cost_hint)
        .side_effects(!read_only);
    if let Some(title) = definition.title() {
        let title = crate::truncate::single_line(title);
        let name = match title.char_indices().nth(MAX_NAME_CHARS) {
            Some(_) => {
                let cut = title
                    .char_indices()
                    .nth(MAX_NAME_CHARS - 1)
                    .map_or(title.len(), |(i, _)| i);
                format!("{}\u{2026}", &title[..cut])
            }
            None => title.into_owned(),
        };
        if !name.is_empty() {
            builder = builder.name(name);
        }
    }
    builder.build()
}

impl Catalog {
    /// A catalog of one upstream's `tools/list` result, namespaces inferred from tool names.
    /// See [`CatalogBuilder::add_tools_list`] for the accepted shapes.
    pub fn from_tools_list(list: &Value) -> Result<Catalog, Error> {
        let mut builder = CatalogBuilder::new();
        builder.add_tools_list(None, list)?;
        builder.build()
    }

    /// Like [`Catalog::from_tools_list`], from JSON text.
    pub fn from_tools_list_str(text: &str) -> Result<Catalog, Error> {
        let mut builder = CatalogBuilder::new();
        builder.add_tools_list_str(None, text)?;
        builder.build()
    }

    /// A builder, for several upstream servers or single tools.
    pub fn builder() -> CatalogBuilder {
        CatalogBuilder::new()
    }

    /// The tools, ordered by tool_id.
    pub fn tools(&self) -> impl ExactSizeIterator<Item = &CatalogTool> {
        self.tools.iter()
    }

    /// The number of tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether the catalog has no tools.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The tool with this canonical tool_id.
    pub fn get(&self, tool_id: &str) -> Option<&CatalogTool> {
        self.position(tool_id).map(|i| &self.tools[i])
    }

    pub(crate) fn position(&self, tool_id: &str) -> Option<usize> {
        self.tools
            .binary_search_by(|t| t.id.as_str().cmp(tool_id))
            .ok()
    }

    pub(crate) fn tool_at(&self, i: usize) -> &CatalogTool {
        &self.tools[i]
    }

    /// The navigation graph.
    pub fn graph(&self) -> &ChoiceGraph {
        &self.graph
    }

    /// The browse path of a tool's leaf, such as `/github/issue/create_issue`.
    pub fn path_of(&self, tool_id: &str) -> Option<&str> {
        self.position(tool_id).map(|i| self.graph.leaf_path(i))
    }

    pub(crate) fn index(&self) -> &Index {
        &self.index
    }

    /// Looks a tool up for hydration (§4.3). An id that is malformed or not in the catalog
    /// is `HYDRATE_FAILED`.
    pub fn hydrate(&self, tool_id: &str) -> Result<Hydration<'_>, Error> {
        let tool = &self.tools[self.lookup(tool_id)?];
        Ok(Hydration {
            tool_id: &tool.id,
            upstream_name: tool.upstream_name(),
            server: tool.server(),
            input_schema: tool.input_schema(),
        })
    }

    /// The position of a tool, or `HYDRATE_FAILED`.
    pub(crate) fn lookup(&self, tool_id: &str) -> Result<usize, Error> {
        if let Err(e) = ToolId::parse(tool_id) {
            return Err(Error::new(ErrorKind::HydrateFailed {
                tool_id: clip(tool_id),
                reason: e.to_string(),
            }));
        }
        self.position(tool_id).ok_or_else(|| {
            Error::new(ErrorKind::HydrateFailed {
                tool_id: clip(tool_id),
                reason: "no tool with this id in the catalog".into(),
            })
        })
    }

    /// Checks arguments against the tool's hydrated input schema (§4.4), before anything is
    /// sent upstream.
    ///
    /// Arguments must be a JSON object. A tool without an input schema accepts any object.
    /// Violations are `ARGS_INVALID`, with up to [`MAX_VIOLATIONS`] of them in
    /// [`ErrorKind::ArgsInvalid`]; an unknown id is `HYDRATE_FAILED`; a schema that does not
    /// compile is `SCHEMA_INVALID`. Remote `$ref`s are not fetched.
    pub fn validate_args(&self, tool_id: &str, args: &Value) -> Result<(), Error> {
        let tool = &self.tools[self.lookup(tool_id)?];
        if !args.is_object() {
            return Err(args_invalid(
                Some("args"),
                format!("the arguments of {} must be a JSON object", tool.id),
            ));
        }
        let validator = match &tool.validator {
            None => return Ok(()),
            Some(Ok(validator)) => validator,
            Some(Err(message)) => {
                return Err(Error::new(ErrorKind::SchemaInvalid {
                    tool_id: tool.id.to_string(),
                    message: message.clone(),
                }))
            }
        };
        let mut violations = Vec::new();
        let mut more = 0usize;
        for error in validator.iter_errors(args) {
            if violations.len() == MAX_VIOLATIONS {
                more += 1;
                continue;
            }
            violations.push(Violation {
                instance_path: error.instance_path().to_string(),
                schema_path: error.schema_path().to_string(),
                message: error.to_string(),
            });
        }
        let Some(first) = violations.first() else {
            return Ok(());
        };
        let total = violations.len() + more;
        let mut message = format!("arguments do not match the input schema of {}: ", tool.id);
        if !first.instance_path.is_empty() {
            message.push_str(&first.instance_path);
            message.push_str(": ");
        }
        message.push_str(&first.message);
        if total > 1 {
            message.push_str(&format!(" (and {} more)", total - 1));
        }
        Err(Error::new(ErrorKind::ArgsInvalid {
            message,
            field: None,
            violations,
        }))
    }

    /// The transparent proxy's stripped `tools/list` (§4.1): one entry per tool, in tool_id
    /// order, without filtering, ranking or top-k.
    ///
    /// ```
    /// use agentwire_toolcard::{Catalog, NameEncoding};
    /// use serde_json::json;
    ///
    /// let catalog = Catalog::from_tools_list(&json!([
    ///     {"name": "weather.get", "description": "Current weather.\nUnits: metric.",
    ///      "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
    ///      "_meta": {"version": "2024-05"}}
    /// ]))?;
    /// let list = catalog.discovery(NameEncoding::PercentEncoded);
    /// assert_eq!(
    ///     serde_json::to_string(&list)?,
    ///     r#"[{"name":"weather%3Aget%402024-05","description":"Current weather. Units: metric.","inputSchema":{"type":"object"}}]"#
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn discovery(&self, encoding: NameEncoding) -> Vec<DiscoveryEntry> {
        self.tools
            .iter()
            .map(|t| DiscoveryEntry {
                name: match encoding {
                    NameEncoding::Canonical => t.id.to_string(),
                    NameEncoding::PercentEncoded => t.id.to_percent_encoded(),
                },
                description: t.card.description().to_owned(),
                input_schema: json!({"type": "object"}),
            })
            .collect()
    }

    /// The tools grouped by namespace, in order (a convenience for listings).
    pub fn namespaces(&self) -> BTreeMap<&str, Vec<&CatalogTool>> {
        let mut map: BTreeMap<&str, Vec<&CatalogTool>> = BTreeMap::new();
        for tool in &self.tools {
            map.entry(tool.id.namespace()).or_default().push(tool);
        }
        map
    }
}
