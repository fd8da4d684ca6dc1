//! The catalog: upstream tools keyed by tool_id, with their cards, graph, index, MCP names
//! and validators; hydration, argument validation and the proxy's discovery list (spec §4).

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Arc, OnceLock};

use serde::Serialize;
use serde_json::{json, Value};

use crate::card::{CardKind, ChoiceCard, MAX_NAME_CHARS};
use crate::error::{args_invalid, clip, invalid_json, invalid_tool, Error, ErrorKind};
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
    definition: Arc<ToolDefinition>,
    card: ChoiceCard,
    mcp_name: String,
    /// Compiled on first use: a catalog rebuilt on every upstream change compiles only the
    /// schemas it validates against.
    validator: OnceLock<crate::schema::Compiled>,
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

    /// The tool's MCP-safe name ([`ToolId::to_mcp_name`]), unique in its catalog.
    pub fn mcp_name(&self) -> &str {
        &self.mcp_name
    }

    /// The name of this tool in a stripped `tools/list` with `encoding`.
    pub fn name_with(&self, encoding: NameEncoding) -> String {
        match encoding {
            NameEncoding::Canonical => self.id.to_string(),
            NameEncoding::PercentEncoded => self.id.to_percent_encoded(),
            NameEncoding::Mcp => self.mcp_name.clone(),
        }
    }

    /// The stripped `tools/list` entry of this tool (§4.1).
    pub fn discovery_entry(&self, encoding: NameEncoding) -> DiscoveryEntry {
        DiscoveryEntry {
            name: self.name_with(encoding),
            description: self.card.description().to_owned(),
            input_schema: json!({"type": "object"}),
        }
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
    /// The MCP-safe name ([`ToolId::to_mcp_name`]: `github.create_issue.v1.4.0`), made only
    /// of MCP's tool-name characters `[A-Za-z0-9_.-]`, so strict clients accept it.
    #[default]
    Mcp,
    /// The canonical tool_id (`github:create_issue@1.4.0`), as spec §4.1 writes it.
    Canonical,
    /// The tool_id percent-encoded (`github%3Acreate_issue%401.4.0`), as spec §4.1 suggests;
    /// `%` is outside MCP's tool-name characters too.
    PercentEncoded,
}

/// One stripped `tools/list` entry of the transparent proxy (§4.1): serializes as
/// `{"name", "description", "inputSchema": {"type": "object"}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiscoveryEntry {
    /// The tool's name in the chosen [`NameEncoding`].
    pub name: String,
    /// The card's description: one line, truncated by §2.4.
    pub description: String,
    /// Always `{"type": "object"}`, a sentinel without properties.
    #[serde(rename = "inputSchema")]
    pub input_schema: Value,
}

/// A tool the catalog could not take, and why: the catalog is built without it.
///
/// The reasons are the spec's `CatalogError`s: a tool whose id cannot be formed (§1.1), a
/// definition that is not a tool, a card over the hard cap (§2.3), a second tool with an id
/// (§1.5) or MCP name already taken. [`Skipped::error`] is the full error, with its §3.4
/// JSON form.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Skipped {
    /// The upstream server the tool came from, if it was given one.
    pub server: Option<String>,
    /// The upstream tool name, when the definition has one.
    pub upstream_name: Option<String>,
    /// The tool_id, when it could be formed (over-budget cards and collisions).
    pub tool_id: Option<String>,
    /// JSON pointer to the tool in its `tools/list` document (`/tools/3`), empty for a tool
    /// added with [`CatalogBuilder::add_tool`].
    pub pointer: String,
    /// Why the tool was skipped (code `CATALOG_ERROR`).
    pub error: Error,
}

impl Skipped {
    /// `{"server", "upstream_name", "tool_id", "pointer", "error"}`, the error being its
    /// §3.4 object; for logs and `agentwire tools`.
    pub fn to_json(&self) -> Value {
        json!({
            "server": self.server,
            "upstream_name": self.upstream_name,
            "tool_id": self.tool_id,
            "pointer": self.pointer,
            "error": self.error.to_json(),
        })
    }
}

impl fmt::Display for Skipped {
    /// `skipped <server>/<upstream name> (<pointer>): <error>`, one line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("skipped ")?;
        if let Some(server) = &self.server {
            write!(f, "{server}/")?;
        }
        match &self.upstream_name {
            Some(name) => write!(f, "{name:?}")?,
            None => f.write_str("a tool")?,
        }
        if !self.pointer.is_empty() {
            write!(f, " ({})", self.pointer)?;
        }
        write!(f, ": {}", self.error)
    }
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
/// if cfg!(feature = "schema") {
///     assert_eq!(error.to_string(), "ARGS_INVALID: arguments do not match the input schema of github:create_issue@1.4.0: \"title\" is a required property");
/// } else {
///     assert_eq!(error.code(), "VALIDATION_UNAVAILABLE");
/// }
/// # Ok::<(), agentwire_toolcard::Error>(())
/// ```
#[derive(Debug)]
pub struct Catalog {
    tools: Vec<CatalogTool>,
    /// MCP name → position in `tools`.
    names: HashMap<String, usize>,
    graph: ChoiceGraph,
    index: Index,
    skipped: Vec<Skipped>,
    /// What the catalog was built from, in the order added, so that one upstream's tools can
    /// be replaced ([`Catalog::with_server`]).
    entries: Vec<Entry>,
}

/// Collects upstream tools, from one or more servers, into a [`Catalog`].
#[derive(Debug, Default)]
pub struct CatalogBuilder {
    entries: Vec<Entry>,
}

#[derive(Debug, Clone)]
struct Entry {
    /// The definition, or why the JSON is not one (reported as a skip when built).
    definition: Result<Arc<ToolDefinition>, Error>,
    /// The `name` member of the JSON, when it is a string (for reports).
    raw_name: Option<String>,
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
        self.entries.push(Entry {
            raw_name: Some(definition.name().to_owned()),
            definition: Ok(Arc::new(definition)),
            server: server.map(str::to_owned),
            pointer: String::new(),
        });
        self
    }

    /// Adds every tool of a `tools/list` result: `{"tools": [...]}`, a whole JSON-RPC response
    /// `{"result": {"tools": [...]}}`, or a bare array of tools. Other members (such as
    /// `nextCursor`) are ignored.
    ///
    /// A document that is not a tools list at all is an error. A tool in it that cannot be
    /// read is not: it is skipped when the catalog is built, and reported in
    /// [`Catalog::skipped`] with a pointer into the document (`/tools/3/name`).
    pub fn add_tools_list(
        &mut self,
        server: Option<&str>,
        list: &Value,
    ) -> Result<&mut Self, Error> {
        let (tools, prefix) = tools_array(list)?;
        for (i, tool) in tools.iter().enumerate() {
            let pointer = format!("{prefix}/{i}");
            self.entries.push(Entry {
                definition: ToolDefinition::from_json_at(tool, &pointer).map(Arc::new),
                raw_name: tool.get("name").and_then(Value::as_str).map(clip),
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
        let value: Value = serde_json::from_str(text).map_err(|e| invalid_json(text, &e))?;
        self.add_tools_list(server, &value)
    }

    /// Derives every tool_id, builds every card and MCP name, and checks for collisions
    /// (§1.5).
    ///
    /// A tool the catalog cannot take is skipped, never the whole catalog: a definition that
    /// is not a tool, an id that cannot be formed, a card over the hard cap (§2.3), an id or
    /// an MCP name another tool already has (the tool added first keeps it). Each skip is
    /// reported in [`Catalog::skipped`] with its `CATALOG_ERROR`; nothing is dropped
    /// silently. A caller that wants all or nothing checks that the report is empty.
    ///
    /// ```
    /// use agentwire_toolcard::Catalog;
    /// use serde_json::json;
    ///
    /// let catalog = Catalog::from_tools_list(&json!([
    ///     {"name": "fs.read", "_meta": {"version": "1"}},
    ///     {"name": "bad tool"},
    ///     {"name": "fs.read", "_meta": {"version": "1"}}
    /// ]))?;
    /// assert_eq!(catalog.len(), 1);
    /// let skipped: Vec<String> = catalog.skipped().iter().map(|s| s.to_string()).collect();
    /// assert_eq!(skipped, [
    ///     "skipped \"bad tool\" (/1): CATALOG_ERROR: invalid tool at /1/name: the name \"bad tool\" does not match [A-Za-z_][A-Za-z0-9_.-]{0,127}",
    ///     "skipped \"fs.read\" (/2): CATALOG_ERROR: tool_id collision: \"fs.read\" and \"fs.read\" both map to fs:read@1",
    /// ]);
    /// # Ok::<(), agentwire_toolcard::Error>(())
    /// ```
    pub fn build(self) -> Result<Catalog, Error> {
        Catalog::from_entries(self.entries)
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
    fn from_entries(entries: Vec<Entry>) -> Result<Catalog, Error> {
        let mut skipped = Vec::new();
        let mut tools = Vec::with_capacity(entries.len());
        // Positions into `entries`, to report skips in the order tools were added.
        let mut skipped_at = Vec::new();
        for (at, entry) in entries.iter().enumerate() {
            let skip = |tool_id: Option<&ToolId>, error: Error| Skipped {
                server: entry.server.clone(),
                upstream_name: entry.raw_name.clone(),
                tool_id: tool_id.map(ToString::to_string),
                pointer: entry.pointer.clone(),
                error,
            };
            let definition = match &entry.definition {
                Ok(definition) => definition,
                Err(error) => {
                    skipped_at.push((at, skip(None, error.clone())));
                    continue;
                }
            };
            let id = match definition.derive_id_at(entry.server.as_deref(), &entry.pointer) {
                Ok(id) => id,
                Err(error) => {
                    skipped_at.push((at, skip(None, error)));
                    continue;
                }
            };
            let card = match tool_card(&id, definition) {
                Ok(card) => card,
                Err(error) => {
                    skipped_at.push((at, skip(Some(&id), error)));
                    continue;
                }
            };
            tools.push((
                at,
                CatalogTool {
                    mcp_name: id.to_mcp_name(),
                    id,
                    server: entry.server.clone(),
                    definition: Arc::clone(definition),
                    card,
                    validator: OnceLock::new(),
                },
            ));
        }
        // Stable: among equal ids the first added stays first and keeps the id (§1.5).
        tools.sort_by(|a, b| a.1.id.cmp(&b.1.id));
        let mut kept: Vec<(usize, CatalogTool)> = Vec::with_capacity(tools.len());
        for (at, tool) in tools {
            match kept.last() {
                Some((_, first)) if first.id == tool.id => {
                    let error = Error::new(ErrorKind::Collision {
                        tool_id: tool.id.to_string(),
                        first: first.upstream_name().to_owned(),
                        second: tool.upstream_name().to_owned(),
                    });
                    skipped_at.push((at, skipped_tool(&entries[at], &tool, error)));
                }
                _ => kept.push((at, tool)),
            }
        }
        // MCP names are distinct for distinct ids except for shortened ones; the tool with
        // the smaller id keeps a contested name.
        let mut names: HashMap<String, usize> = HashMap::with_capacity(kept.len());
        let mut final_tools = Vec::with_capacity(kept.len());
        for (at, tool) in kept {
            if let Some(&other) = names.get(&tool.mcp_name) {
                let first: &CatalogTool = &final_tools[other];
                let error = Error::new(ErrorKind::NameCollision {
                    name: tool.mcp_name.clone(),
                    first: first.id.to_string(),
                    second: tool.id.to_string(),
                });
                skipped_at.push((at, skipped_tool(&entries[at], &tool, error)));
                continue;
            }
            names.insert(tool.mcp_name.clone(), final_tools.len());
            final_tools.push(tool);
        }
        skipped_at.sort_by_key(|(at, _)| *at);
        skipped.extend(skipped_at.into_iter().map(|(_, s)| s));
        let tools = final_tools;
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
            names,
            graph,
            index,
            skipped,
            entries,
        })
    }

    /// A catalog of one upstream's `tools/list` result, namespaces inferred from tool names.
    /// See [`CatalogBuilder::add_tools_list`] for the accepted shapes and
    /// [`CatalogBuilder::build`] for the tools that are skipped.
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

    /// A new catalog where the tools of upstream `server` are those of `list` (a
    /// `tools/list` result, as [`CatalogBuilder::add_tools_list`] takes it), every other
    /// tool as it is here: what a gateway builds when an upstream reports
    /// `notifications/tools/list_changed`, or when it connects. A server not in the catalog
    /// is added after the others. Skips are reported afresh in the new catalog.
    ///
    /// Pass an empty list to remove a server's tools.
    ///
    /// ```
    /// use agentwire_toolcard::CatalogBuilder;
    /// use serde_json::json;
    ///
    /// let mut builder = CatalogBuilder::new();
    /// builder.add_tools_list(Some("fs"), &json!([{"name": "read", "_meta": {"version": "1"}}]))?;
    /// builder.add_tools_list(Some("web"), &json!([{"name": "fetch", "_meta": {"version": "1"}}]))?;
    /// let catalog = builder.build()?;
    ///
    /// let changed = catalog.with_server("fs", &json!({"tools": [
    ///     {"name": "read", "_meta": {"version": "2"}},
    ///     {"name": "write", "_meta": {"version": "1"}}
    /// ]}))?;
    /// let ids: Vec<&str> = changed.tools().map(|t| t.id().as_str()).collect();
    /// assert_eq!(ids, ["fs:read@2", "fs:write@1", "web:fetch@1"]);
    /// # Ok::<(), agentwire_toolcard::Error>(())
    /// ```
    pub fn with_server(&self, server: &str, list: &Value) -> Result<Catalog, Error> {
        let mut fresh = CatalogBuilder::new();
        fresh.add_tools_list(Some(server), list)?;
        let mut entries = Vec::with_capacity(self.entries.len() + fresh.entries.len());
        let mut fresh = Some(fresh.entries);
        for entry in &self.entries {
            if entry.server.as_deref() == Some(server) {
                if let Some(new) = fresh.take() {
                    entries.extend(new);
                }
            } else {
                entries.push(entry.clone());
            }
        }
        if let Some(new) = fresh {
            entries.extend(new);
        }
        Catalog::from_entries(entries)
    }

    /// The upstream servers named when tools were added, in the order first added.
    pub fn servers(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for entry in &self.entries {
            if let Some(server) = entry.server.as_deref() {
                if !out.contains(&server) {
                    out.push(server);
                }
            }
        }
        out
    }

    /// The tools that could not be taken, in the order they were added, each with its
    /// error (see [`CatalogBuilder::build`]).
    pub fn skipped(&self) -> &[Skipped] {
        &self.skipped
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

    /// The tool a name stands for: its canonical tool_id, its MCP name
    /// ([`ToolId::to_mcp_name`], shortened ones included) or its percent-encoded id. The
    /// canonical id stays the correlation key (§1.6); the other two are views of it, so an
    /// agent may pass whichever it was shown.
    ///
    /// ```
    /// use agentwire_toolcard::Catalog;
    /// use serde_json::json;
    ///
    /// let catalog = Catalog::from_tools_list(&json!([
    ///     {"name": "github.create_issue", "_meta": {"version": "1.4.0"}}
    /// ]))?;
    /// for name in ["github:create_issue@1.4.0", "github.create_issue.v1.4.0",
    ///              "github%3Acreate_issue%401.4.0"] {
    ///     assert_eq!(catalog.resolve(name).unwrap().id().as_str(), "github:create_issue@1.4.0");
    /// }
    /// assert!(catalog.resolve("github.create_issue.v2").is_none());
    /// # Ok::<(), agentwire_toolcard::Error>(())
    /// ```
    pub fn resolve(&self, name: &str) -> Option<&CatalogTool> {
        self.resolve_position(name).map(|i| &self.tools[i])
    }

    fn resolve_position(&self, name: &str) -> Option<usize> {
        if let Some(i) = self.position(name) {
            return Some(i);
        }
        if let Some(&i) = self.names.get(name) {
            return Some(i);
        }
        if name.contains('%') {
            let id = ToolId::from_percent_encoded(name).ok()?;
            return self.position(id.as_str());
        }
        None
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

    /// Looks a tool up for hydration (§4.3), by any name [`Catalog::resolve`] takes. A name
    /// that is no tool of the catalog is `HYDRATE_FAILED`.
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
        if let Some(i) = self.resolve_position(tool_id) {
            return Ok(i);
        }
        let reason = match ToolId::parse(tool_id) {
            Ok(_) => "no tool with this id in the catalog".to_owned(),
            Err(_) if ToolId::from_mcp_name(tool_id).is_ok() => {
                "no tool with this MCP name in the catalog".to_owned()
            }
            Err(e) => e.message(),
        };
        Err(Error::new(ErrorKind::HydrateFailed {
            tool_id: clip(tool_id),
            reason,
        }))
    }

    /// Checks arguments against the tool's hydrated input schema (§4.4), before anything is
    /// sent upstream.
    ///
    /// Arguments must be a JSON object. A tool without an input schema accepts any object.
    /// Violations are `ARGS_INVALID`, with up to [`MAX_VIOLATIONS`] of them in
    /// [`ErrorKind::ArgsInvalid`]; an unknown id is `HYDRATE_FAILED`; a schema that does not
    /// compile is `SCHEMA_INVALID`. Remote `$ref`s are not fetched. Without the crate's
    /// `schema` feature, a tool with an input schema is `VALIDATION_UNAVAILABLE`.
    pub fn validate_args(&self, tool_id: &str, args: &Value) -> Result<(), Error> {
        let tool = &self.tools[self.lookup(tool_id)?];
        if !args.is_object() {
            return Err(args_invalid(
                Some("args"),
                format!("the arguments of {} must be a JSON object", tool.id),
            ));
        }
        let Some(schema) = tool.input_schema() else {
            return Ok(());
        };
        let compiled = tool
            .validator
            .get_or_init(|| crate::schema::compile(schema));
        crate::schema::validate(compiled, &tool.id, args)
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
    /// let list = catalog.discovery(NameEncoding::Mcp);
    /// assert_eq!(
    ///     serde_json::to_string(&list)?,
    ///     r#"[{"name":"weather.get.v2024-05","description":"Current weather. Units: metric.","inputSchema":{"type":"object"}}]"#
    /// );
    /// let list = catalog.discovery(NameEncoding::PercentEncoded);
    /// assert_eq!(list[0].name, "weather%3Aget%402024-05");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn discovery(&self, encoding: NameEncoding) -> Vec<DiscoveryEntry> {
        self.tools
            .iter()
            .map(|t| t.discovery_entry(encoding))
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

fn skipped_tool(entry: &Entry, tool: &CatalogTool, error: Error) -> Skipped {
    Skipped {
        server: entry.server.clone(),
        upstream_name: Some(tool.upstream_name().to_owned()),
        tool_id: Some(tool.id.to_string()),
        pointer: entry.pointer.clone(),
        error,
    }
}
