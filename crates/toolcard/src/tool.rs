//! Upstream MCP tool definitions and the derivation of their tool_id (spec §1.2–§1.4).

use serde_json::{Map, Value};

use crate::canonical::{self, py_str_scalar, truthy};
use crate::error::{invalid_tool, Error, ErrorKind};
use crate::tool_id::{is_valid_name, is_valid_namespace, is_valid_version, ToolId, ToolIdParts};

/// The namespace of tools whose upstream name carries none (§1.4).
pub const FALLBACK_NAMESPACE: &str = "mcp";

/// An upstream MCP tool definition (the `Tool` object of a `tools/list` result): what this
/// crate reads from it, checked.
///
/// Unknown members are ignored, so definitions from newer protocol revisions are accepted.
/// Members this crate reads must have the types MCP gives them: a string `name`, a string
/// `description`, an object `inputSchema`, an object `annotations` with boolean hints, an
/// object `_meta`. A member that is `null` counts as absent.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDefinition {
    name: String,
    title: Option<String>,
    description: String,
    input_schema: Option<Value>,
    annotations: Annotations,
    version: Option<String>,
}

/// The MCP tool annotations this crate uses (all are hints).
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Annotations {
    /// `annotations.title`.
    pub title: Option<String>,
    /// `readOnlyHint`: the tool does not modify its environment.
    pub read_only: Option<bool>,
    /// `destructiveHint`: the tool may perform destructive updates.
    pub destructive: Option<bool>,
    /// `idempotentHint`: repeated calls with the same arguments have no further effect.
    pub idempotent: Option<bool>,
    /// `openWorldHint`: the tool interacts with external entities.
    pub open_world: Option<bool>,
    /// `costHint`, a non-standard annotation some servers send; 0 when absent.
    pub cost_hint: f64,
}

impl ToolDefinition {
    /// Reads a tool definition from its MCP JSON.
    ///
    /// ```
    /// use agentwire_toolcard::ToolDefinition;
    /// use serde_json::json;
    ///
    /// let tool = ToolDefinition::from_json(&json!({
    ///     "name": "github.create_issue",
    ///     "description": "Create an issue.",
    ///     "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}}},
    ///     "_meta": {"version": "1.4.0"}
    /// }))?;
    /// assert_eq!(tool.derive_id(None)?.as_str(), "github:create_issue@1.4.0");
    /// # Ok::<(), agentwire_toolcard::Error>(())
    /// ```
    pub fn from_json(value: &Value) -> Result<ToolDefinition, Error> {
        Self::from_json_at(value, "")
    }

    pub(crate) fn from_json_at(value: &Value, pointer: &str) -> Result<ToolDefinition, Error> {
        let object = value.as_object().ok_or_else(|| {
            invalid_tool(
                pointer.to_owned(),
                None,
                "a tool definition must be an object".into(),
            )
        })?;
        let name = match object.get("name") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(Value::String(_)) => {
                return Err(invalid_tool(
                    format!("{pointer}/name"),
                    None,
                    "`name` is empty".into(),
                ))
            }
            Some(_) => {
                return Err(invalid_tool(
                    format!("{pointer}/name"),
                    None,
                    "`name` is not a string".into(),
                ))
            }
            None => {
                return Err(invalid_tool(
                    pointer.to_owned(),
                    None,
                    "missing `name`".into(),
                ))
            }
        };
        let fail = |member: &str, reason: &str| {
            invalid_tool(
                format!("{pointer}/{member}"),
                Some(&name),
                reason.to_owned(),
            )
        };
        let string = |member: &str| -> Result<Option<String>, Error> {
            match object.get(member) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(fail(member, &format!("`{member}` is not a string"))),
            }
        };
        let title = string("title")?;
        let description = string("description")?.unwrap_or_default();
        let input_schema = match object.get("inputSchema") {
            None | Some(Value::Null) => None,
            Some(schema @ Value::Object(_)) => Some(schema.clone()),
            Some(_) => return Err(fail("inputSchema", "`inputSchema` is not an object")),
        };
        let annotations = match object.get("annotations") {
            None | Some(Value::Null) => Annotations::default(),
            Some(Value::Object(map)) => read_annotations(map)
                .map_err(|(member, reason)| fail(&format!("annotations/{member}"), &reason))?,
            Some(_) => return Err(fail("annotations", "`annotations` is not an object")),
        };
        let version = match object.get("_meta") {
            None | Some(Value::Null) => None,
            Some(Value::Object(meta)) => match meta.get("version") {
                // Python's `if version:` — false-y values mean "no version".
                Some(v) if truthy(v) => Some(py_str_scalar(v).ok_or_else(|| {
                    fail(
                        "_meta/version",
                        "`_meta.version` is neither a string nor a number",
                    )
                })?),
                _ => None,
            },
            Some(_) => return Err(fail("_meta", "`_meta` is not an object")),
        };
        Ok(ToolDefinition {
            name,
            title,
            description,
            input_schema,
            annotations,
            version,
        })
    }

    /// The upstream name, as the server reports it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The human-readable title: `title`, else `annotations.title`.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref().or(self.annotations.title.as_deref())
    }

    /// The description (empty when absent).
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The input schema, when the definition has one.
    pub fn input_schema(&self) -> Option<&Value> {
        self.input_schema.as_ref()
    }

    /// The annotations.
    pub fn annotations(&self) -> &Annotations {
        &self.annotations
    }

    /// The declared version: `_meta.version` as Python's `str()` renders it, when truthy.
    pub fn version(&self) -> Option<&str> {
        self.version.as_deref()
    }

    /// The canonical shape JSON of the input schema (§1.3).
    pub fn canonical_shape(&self) -> Result<String, Error> {
        canonical_shape_at(
            self.input_schema.as_ref().unwrap_or(&Value::Null),
            "/inputSchema",
            Some(&self.name),
        )
    }

    /// Derives the tool_id (§1.2–§1.4).
    ///
    /// - **Namespace.** With `server`, the server name lower-cased; the tool name is then kept
    ///   verbatim. Without it, inferred from the tool name: split at the first `.` or `/`
    ///   (whichever comes first) when the text before it is not empty, and drop the prefix
    ///   from the name when the text after it is not empty either; otherwise, when the name
    ///   has at least three `_`-separated parts and the first is not empty, that part (the
    ///   name is kept verbatim); otherwise `mcp`. Namespaces are lower-cased (ASCII).
    /// - **Version.** `_meta.version`, when present and truthy; then no hash is emitted.
    /// - **Hash.** Otherwise `hash8` of the upstream name (as reported, before any stripping)
    ///   and the canonical shape.
    ///
    /// A namespace, name or version that breaks the grammar is [`ErrorKind::InvalidTool`],
    /// never silently dropped or repaired.
    ///
    /// ```
    /// use agentwire_toolcard::ToolDefinition;
    /// use serde_json::json;
    ///
    /// let tool = ToolDefinition::from_json(&json!({
    ///     "name": "slack_send_message",
    ///     "inputSchema": {"type": "object",
    ///                     "properties": {"channel": {}, "text": {}},
    ///                     "required": ["channel", "text"]}
    /// }))?;
    /// assert_eq!(tool.derive_id(None)?.as_str(), "slack:slack_send_message#283a5dcf");
    /// assert_eq!(tool.derive_id(Some("Chat"))?.as_str(), "chat:slack_send_message#283a5dcf");
    /// # Ok::<(), agentwire_toolcard::Error>(())
    /// ```
    pub fn derive_id(&self, server: Option<&str>) -> Result<ToolId, Error> {
        self.derive_id_at(server, "")
    }

    pub(crate) fn derive_id_at(
        &self,
        server: Option<&str>,
        pointer: &str,
    ) -> Result<ToolId, Error> {
        let fail = |member: &str, reason: String| {
            invalid_tool(format!("{pointer}{member}"), Some(&self.name), reason)
        };
        let (namespace, name) = match server {
            Some(server) => (server.to_ascii_lowercase(), self.name.as_str()),
            None => infer_namespace(&self.name),
        };
        if !is_valid_namespace(&namespace) {
            let source = match server {
                Some(server) => format!("server name {server:?}"),
                None => format!("tool name {:?}", self.name),
            };
            return Err(fail(
                "/name",
                format!(
                    "the namespace {namespace:?} derived from the {source} does not match [a-z][a-z0-9_-]{{0,63}}"
                ),
            ));
        }
        if !is_valid_name(name) {
            return Err(fail(
                "/name",
                format!("the name {name:?} does not match [A-Za-z_][A-Za-z0-9_.-]{{0,127}}"),
            ));
        }
        let (version, hash8) = match &self.version {
            Some(version) => {
                if !is_valid_version(version) {
                    return Err(fail(
                        "/_meta/version",
                        format!("the version {version:?} does not match [A-Za-z0-9._-]{{1,32}}"),
                    ));
                }
                (Some(version.clone()), None)
            }
            None => {
                let shape = canonical_shape_at(
                    self.input_schema.as_ref().unwrap_or(&Value::Null),
                    &format!("{pointer}/inputSchema"),
                    Some(&self.name),
                )?;
                (None, Some(canonical::hash8_of(&self.name, &shape)))
            }
        };
        ToolId::from_parts(&ToolIdParts {
            namespace,
            name: name.to_owned(),
            version,
            hash8,
        })
    }
}

fn read_annotations(map: &Map<String, Value>) -> Result<Annotations, (String, String)> {
    let hint = |member: &str| -> Result<Option<bool>, (String, String)> {
        match map.get(member) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err((member.to_owned(), format!("`{member}` is not a boolean"))),
        }
    };
    let title = match map.get("title") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(("title".into(), "`title` is not a string".into())),
    };
    let cost_hint = match map.get("costHint") {
        None | Some(Value::Null) => 0.0,
        Some(Value::Number(n)) => match n.as_f64() {
            Some(f) if f.is_finite() && f >= 0.0 => f,
            _ => {
                return Err((
                    "costHint".into(),
                    "`costHint` is not a finite number ≥ 0".into(),
                ))
            }
        },
        Some(_) => return Err(("costHint".into(), "`costHint` is not a number".into())),
    };
    Ok(Annotations {
        title,
        read_only: hint("readOnlyHint")?,
        destructive: hint("destructiveHint")?,
        idempotent: hint("idempotentHint")?,
        open_world: hint("openWorldHint")?,
        cost_hint,
    })
}

/// Splits an upstream tool name into namespace (lower-cased) and name, by §1.4.
pub(crate) fn infer_namespace(upstream: &str) -> (String, &str) {
    let first_sep = upstream.char_indices().find(|&(_, c)| c == '.' || c == '/');
    let mut separators: Vec<char> = Vec::with_capacity(2);
    if let Some((_, c)) = first_sep {
        separators.push(c);
        separators.push(if c == '.' { '/' } else { '.' });
    }
    for sep in separators {
        if let Some(i) = upstream.find(sep) {
            if i > 0 {
                let rest = &upstream[i + 1..];
                let name = if rest.is_empty() { upstream } else { rest };
                return (upstream[..i].to_ascii_lowercase(), name);
            }
        }
    }
    let mut parts = upstream.split('_');
    let first = parts.next().unwrap_or("");
    if !first.is_empty() && parts.count() >= 2 {
        return (first.to_ascii_lowercase(), upstream);
    }
    (FALLBACK_NAMESPACE.to_owned(), upstream)
}

fn canonical_shape_at(schema: &Value, pointer: &str, name: Option<&str>) -> Result<String, Error> {
    canonical::canonical_shape(schema).map_err(|e| {
        Error::new(ErrorKind::InvalidTool {
            pointer: format!("{pointer}{}", e.pointer),
            upstream_name: name.map(str::to_owned),
            reason: format!("no canonical shape (§1.3): {}", e.reason),
        })
    })
}

/// The canonical shape JSON of an input schema (spec §1.3), byte-identical to the spec's
/// Python `_canonical_shape`.
///
/// ```
/// use agentwire_toolcard::canonical_shape;
/// use serde_json::json;
///
/// let schema = json!({"type": "object",
///                     "properties": {"zürich": {}, "a": {"type": "string"}},
///                     "required": ["a"]});
/// assert_eq!(canonical_shape(&schema)?,
///            r#"{"properties":["a","z\u00fcrich"],"required":["a"]}"#);
/// # Ok::<(), agentwire_toolcard::Error>(())
/// ```
pub fn canonical_shape(input_schema: &Value) -> Result<String, Error> {
    canonical_shape_at(input_schema, "", None)
}

/// The `hash8` of spec §1.3: the first 8 hex digits of
/// `sha256(upstream_name + "\n" + canonical_shape(input_schema))`.
///
/// ```
/// use agentwire_toolcard::hash8;
/// use serde_json::json;
///
/// let schema = json!({"properties": {"path": {"type": "string"}}, "required": ["path"]});
/// assert_eq!(hash8("read_file", &schema)?, "85b56782");
/// # Ok::<(), agentwire_toolcard::Error>(())
/// ```
pub fn hash8(upstream_name: &str, input_schema: &Value) -> Result<String, Error> {
    let shape = canonical_shape(input_schema)?;
    Ok(canonical::hash8_of(upstream_name, &shape))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[allow(clippy::needless_pass_by_value)]
    fn id(tool: Value) -> Result<String, Error> {
        ToolDefinition::from_json(&tool)?
            .derive_id(None)
            .map(ToolId::into_string)
    }

    #[test]
    fn inference() {
        assert_eq!(
            infer_namespace("github.create_issue"),
            ("github".into(), "create_issue")
        );
        assert_eq!(infer_namespace("weather/get"), ("weather".into(), "get"));
        assert_eq!(infer_namespace("a/b.c"), ("a".into(), "b.c"));
        assert_eq!(infer_namespace("a.b/c"), ("a".into(), "b/c"));
        assert_eq!(infer_namespace("a.b.c"), ("a".into(), "b.c"));
        assert_eq!(
            infer_namespace("trailing."),
            ("trailing".into(), "trailing.")
        );
        assert_eq!(infer_namespace(".hidden"), ("mcp".into(), ".hidden"));
        assert_eq!(
            infer_namespace("slack_send_message"),
            ("slack".into(), "slack_send_message")
        );
        assert_eq!(
            infer_namespace("_private_tool_x"),
            ("mcp".into(), "_private_tool_x")
        );
        assert_eq!(
            infer_namespace("mcp__server__tool"),
            ("mcp".into(), "mcp__server__tool")
        );
        assert_eq!(infer_namespace("write_file"), ("mcp".into(), "write_file"));
        assert_eq!(
            infer_namespace("GitHub.search"),
            ("github".into(), "search")
        );
    }

    #[test]
    fn spec_examples() {
        assert_eq!(
            id(json!({"name": "github.create_issue", "_meta": {"version": "1.4.0"}})).unwrap(),
            "github:create_issue@1.4.0"
        );
        assert_eq!(
            id(json!({"name": "weather.get", "_meta": {"version": "2024-05"}})).unwrap(),
            "weather:get@2024-05"
        );
        assert_eq!(
            id(json!({"name": "slack_send_message"})).unwrap(),
            "slack:slack_send_message#2fae1fd2"
        );
        assert_eq!(
            id(json!({"name": "read_file"})).unwrap(),
            "mcp:read_file#559d82ea"
        );
    }

    #[test]
    fn versions_follow_python_truthiness() {
        let with = |v: Value| id(json!({"name": "a.b", "_meta": {"version": v}}));
        assert_eq!(with(json!(2)).unwrap(), "a:b@2");
        assert_eq!(with(json!(1.5)).unwrap(), "a:b@1.5");
        assert_eq!(with(json!(true)).unwrap(), "a:b@True");
        assert!(with(json!("")).unwrap().starts_with("a:b#"));
        assert!(with(json!(0)).unwrap().starts_with("a:b#"));
        assert!(with(json!(null)).unwrap().starts_with("a:b#"));
        assert!(with(json!({})).unwrap().starts_with("a:b#"));
        assert!(with(json!("1.0 beta")).is_err());
        assert!(with(json!({"major": 1})).is_err());
    }

    #[test]
    fn bad_names_are_errors_not_drops() {
        for name in [
            "123tool",
            "do something",
            "café.latte",
            "server/tools/list",
            "a..b/",
        ] {
            let err = id(json!({"name": name})).unwrap_err();
            assert!(
                matches!(err.kind(), ErrorKind::InvalidTool { .. }),
                "{name}: {err}"
            );
        }
        assert!(id(json!({"name": 5})).is_err());
        assert!(id(json!({"name": "x", "inputSchema": []})).is_err());
        assert!(id(json!({"name": "x", "annotations": {"readOnlyHint": "yes"}})).is_err());
        let err = ToolDefinition::from_json(&json!({"name": "ok_tool"}))
            .unwrap()
            .derive_id(Some("My Server"))
            .unwrap_err();
        assert!(err.to_string().contains("server name"), "{err}");
    }

    #[test]
    fn hash_uses_the_upstream_name_before_stripping() {
        let a = id(json!({"name": "github.create_issue"})).unwrap();
        let b = id(json!({"name": "gitlab.create_issue"})).unwrap();
        assert_ne!(a[a.len() - 8..], b[b.len() - 8..]);
    }
}
