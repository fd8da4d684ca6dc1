//! The workspace-aware shapes of the spec: the `tool_definitions` registry, the
//! `tool_request` envelope and the `error` envelope, plus [`check_call`], which decides
//! whether a call is legal for a tool's scope.

use std::collections::BTreeMap;
use std::fmt;
use std::io::{BufRead, Write};
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::decoder::{Decoder, SectionSource, StrDecoder};
use crate::encoder::Encoder;
use crate::error::{Error, ErrorKind, Position, Result};
use crate::header::Header;
use crate::layouts::{expect_section, Layout};

/// Error code: a fan-out request names a repository that is not in the workspace.
pub const ERR_CODE_UNKNOWN_REPO: &str = "unknown_repo";
/// Error code: a `scope: fan-out` request omits `repo` in workspace mode.
pub const ERR_CODE_MISSING_REPO_LIST: &str = "missing_repo_list";
/// Error code: a `scope: repo` request omits `repo` in workspace mode.
pub const ERR_CODE_MISSING_REPO: &str = "missing_repo";
/// Error code: a `scope: workspace` request includes `repo`.
pub const ERR_CODE_REPO_NOT_ALLOWED: &str = "repo_not_allowed";
/// Error code: the `repo` parameter has the wrong type for the tool's scope.
pub const ERR_CODE_WRONG_REPO_SHAPE: &str = "wrong_repo_shape";

fn schema(message: impl Into<String>) -> Error {
    ErrorKind::Schema(message.into()).into()
}

/// A tool's declared scope: which repositories a call addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// One repository, named by the call's `repo` (a plain string).
    Repo,
    /// The workspace as a whole; the call must not name a repository.
    Workspace,
    /// Several repositories, listed by the call's `repo` (a JSON array; `["*"]` is all).
    FanOut,
}

impl Scope {
    /// Every scope.
    pub const ALL: [Scope; 3] = [Scope::Repo, Scope::Workspace, Scope::FanOut];

    /// The wire spelling: `repo`, `workspace` or `fan-out`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Repo => "repo",
            Scope::Workspace => "workspace",
            Scope::FanOut => "fan-out",
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Scope {
    type Err = Error;

    /// Parses `repo`, `workspace` or `fan-out`; anything else (the empty string included) is
    /// a `schema` error.
    fn from_str(s: &str) -> Result<Self> {
        Scope::ALL
            .into_iter()
            .find(|scope| scope.as_str() == s)
            .ok_or_else(|| {
                schema(format!(
                    "scope must be `repo`, `workspace` or `fan-out`, found {s:?}"
                ))
            })
    }
}

impl Serialize for Scope {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Scope {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// One row of the `tool_definitions` registry.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// The MCP tool name.
    pub name: String,
    /// Its scope.
    pub scope: Scope,
}

/// The `tool_definitions` section: `fields=name,scope`, rows in ascending byte order of
/// `name`, no meta.
///
/// Encoding sorts the rows; an empty or duplicate name is a `schema` error. Decoding keeps
/// the wire order and rejects an unknown or empty scope, a missing column and a duplicate
/// name (`schema`, with the row's position).
///
/// ```
/// use agentwire_gcx1::{Layout, Scope, ToolDefinition, ToolDefinitions};
///
/// let registry = ToolDefinitions(vec![
///     ToolDefinition { name: "search_symbols".into(), scope: Scope::FanOut },
///     ToolDefinition { name: "get_symbol_source".into(), scope: Scope::Repo },
///     ToolDefinition { name: "list_repos".into(), scope: Scope::Workspace },
/// ]);
/// assert_eq!(
///     registry.to_gcx()?,
///     "GCX1 tool=tool_definitions fields=name,scope\n\
///      get_symbol_source\trepo\nlist_repos\tworkspace\nsearch_symbols\tfan-out\n"
/// );
/// let err = ToolDefinitions::from_gcx("GCX1 tool=tool_definitions fields=name,scope\nx\tglobal\n")
///     .unwrap_err();
/// assert_eq!((err.code(), err.line()), ("schema", Some(2)));
/// # Ok::<(), agentwire_gcx1::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ToolDefinitions(pub Vec<ToolDefinition>);

const DEFINITION_FIELDS: &[&str] = &["name", "scope"];

impl ToolDefinitions {
    fn write<W: Write>(&self, encoder: &mut Encoder<W>) -> Result<()> {
        let mut rows: Vec<&ToolDefinition> = self.0.iter().collect();
        rows.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
        for pair in rows.windows(2) {
            if pair[0].name == pair[1].name {
                return Err(schema(format!("tool {:?} is defined twice", pair[0].name)));
            }
        }
        if rows.iter().any(|d| d.name.is_empty()) {
            return Err(schema("a tool definition has an empty name"));
        }
        encoder.begin_section(&Header::new(
            "tool_definitions",
            DEFINITION_FIELDS.iter().copied(),
        ))?;
        rows.iter()
            .try_for_each(|d| encoder.write_row([d.name.as_str(), d.scope.as_str()]))
    }

    fn read<S: SectionSource>(source: &mut S) -> Result<Self> {
        expect_section(source, "tool_definitions", DEFINITION_FIELDS)?;
        let mut definitions: Vec<ToolDefinition> = Vec::new();
        while let Some(definition) = source.with_next_row(|row, fields| {
            let at = |offset| row.position(offset);
            let mut name = None;
            let mut scope = None;
            for ((cell, offset), field) in row.raw_cells().zip(fields) {
                match field.as_str() {
                    "name" => name = Some((crate::escape::unescape(cell).into_owned(), offset)),
                    "scope" => scope = Some((crate::escape::unescape(cell).into_owned(), offset)),
                    _ => {}
                }
            }
            let end = row.as_raw_str().len();
            let (name, name_at) = name.unwrap_or_default();
            if name.is_empty() {
                return Err(schema("a tool definition has an empty name").or_position(at(name_at)));
            }
            let (scope, scope_at) = scope.unwrap_or((String::new(), end));
            let scope = scope
                .parse::<Scope>()
                .map_err(|e| e.or_position(at(scope_at)))?;
            Ok(ToolDefinition { name, scope })
        })? {
            if definitions.iter().any(|d| d.name == definition.name) {
                return Err(Error::new(
                    ErrorKind::Schema(format!("tool {:?} is defined twice", definition.name)),
                    Some(Position::new(source.line_no(), 1)),
                ));
            }
            definitions.push(definition);
        }
        Ok(ToolDefinitions(definitions))
    }
}

/// Which repositories a call addresses: the union shape of the `repo` cell.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RepoTarget {
    /// `scope=repo`: one named repository (a plain cell).
    Repo(String),
    /// `scope=workspace`: no repository (an empty cell).
    Workspace,
    /// `scope=fan-out`: every repository of the workspace (the cell `["*"]`).
    AllRepos,
    /// `scope=fan-out`: the named repositories (a compact JSON array of strings).
    Repos(Vec<String>),
}

impl RepoTarget {
    /// The scope this target belongs to.
    pub fn scope(&self) -> Scope {
        match self {
            RepoTarget::Repo(_) => Scope::Repo,
            RepoTarget::Workspace => Scope::Workspace,
            RepoTarget::AllRepos | RepoTarget::Repos(_) => Scope::FanOut,
        }
    }

    /// The `repo` cell's text.
    fn cell(&self) -> Result<String> {
        match self {
            RepoTarget::Repo(name) if name.is_empty() => {
                Err(schema("scope `repo` needs a non-empty repo name"))
            }
            RepoTarget::Repo(name) => Ok(name.clone()),
            RepoTarget::Workspace => Ok(String::new()),
            RepoTarget::AllRepos => Ok("[\"*\"]".into()),
            RepoTarget::Repos(names) => {
                if names.is_empty() {
                    return Err(schema(
                        "scope `fan-out` needs at least one repo, or `[\"*\"]`",
                    ));
                }
                if names.iter().any(|n| n == "*") {
                    return Err(schema(
                        "the `*` sentinel must be the only element of the list",
                    ));
                }
                if names.iter().any(String::is_empty) {
                    return Err(schema("a repo name is empty"));
                }
                let list = Value::Array(names.iter().cloned().map(Value::String).collect());
                crate::json::to_json_string(&list)
            }
        }
    }

    /// Reads the `repo` cell of a request with `scope`.
    fn parse(scope: Scope, cell: &str) -> Result<Self> {
        match scope {
            Scope::Repo if cell.is_empty() => {
                Err(schema("scope `repo` needs a non-empty repo name"))
            }
            Scope::Repo => Ok(RepoTarget::Repo(cell.to_owned())),
            Scope::Workspace if cell.is_empty() => Ok(RepoTarget::Workspace),
            Scope::Workspace => Err(schema(format!(
                "scope `workspace` takes no repo, found {cell:?}"
            ))),
            Scope::FanOut => {
                let names: Vec<String> = serde_json::from_str(cell).map_err(|_| {
                    schema(format!(
                        "scope `fan-out` needs a JSON array of repo names, found {cell:?}"
                    ))
                })?;
                match names.as_slice() {
                    [] => Err(schema(
                        "scope `fan-out` needs at least one repo, or `[\"*\"]`",
                    )),
                    [only] if only == "*" => Ok(RepoTarget::AllRepos),
                    _ if names.iter().any(|n| n == "*") => Err(schema(
                        "the `*` sentinel must be the only element of the list",
                    )),
                    _ if names.iter().any(String::is_empty) => Err(schema("a repo name is empty")),
                    _ => Ok(RepoTarget::Repos(names)),
                }
            }
        }
    }

    /// The MCP `repo` argument for this target (`None` when the call must omit it).
    pub fn to_argument(&self) -> Option<Value> {
        match self {
            RepoTarget::Repo(name) => Some(Value::String(name.clone())),
            RepoTarget::Workspace => None,
            RepoTarget::AllRepos => Some(Value::Array(vec![Value::String("*".into())])),
            RepoTarget::Repos(names) => Some(Value::Array(
                names.iter().cloned().map(Value::String).collect(),
            )),
        }
    }
}

/// The `tool_request` envelope: `fields=tool,scope,repo`, exactly one row, the `repo` cell's
/// shape decided by the scope (see [`RepoTarget`]).
///
/// Its JSON form mirrors the call: `{"tool": ..., "scope": ..., "repo": ...}` with `repo` a
/// string, absent, or an array.
///
/// ```
/// use agentwire_gcx1::{Layout, RepoTarget, ToolRequest};
///
/// let request = ToolRequest {
///     tool: "search_symbols".into(),
///     target: RepoTarget::Repos(vec!["gortex".into(), "gortex-cloud".into()]),
/// };
/// let text = request.to_gcx()?;
/// assert_eq!(
///     text,
///     "GCX1 tool=tool_request fields=tool,scope,repo\n\
///      search_symbols\tfan-out\t[\"gortex\",\"gortex-cloud\"]\n"
/// );
/// assert_eq!(ToolRequest::from_gcx(&text)?, request);
/// # Ok::<(), agentwire_gcx1::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ToolRequest {
    /// The MCP tool name.
    pub tool: String,
    /// The repositories addressed.
    pub target: RepoTarget,
}

const REQUEST_FIELDS: &[&str] = &["tool", "scope", "repo"];

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RequestJson {
    tool: String,
    scope: Scope,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    repo: Option<Value>,
}

impl Serialize for ToolRequest {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        RequestJson {
            tool: self.tool.clone(),
            scope: self.target.scope(),
            repo: self.target.to_argument(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for ToolRequest {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let json = RequestJson::deserialize(d)?;
        let cell = match (&json.repo, json.scope) {
            (None, _) => String::new(),
            (Some(Value::String(name)), Scope::Repo) => name.clone(),
            (Some(list @ Value::Array(_)), Scope::FanOut) => list.to_string(),
            (Some(other), scope) => {
                return Err(serde::de::Error::custom(format!(
                    "repo {other} does not fit scope `{scope}`"
                )))
            }
        };
        let target = RepoTarget::parse(json.scope, &cell).map_err(serde::de::Error::custom)?;
        Ok(ToolRequest {
            tool: json.tool,
            target,
        })
    }
}

impl ToolRequest {
    fn write<W: Write>(&self, encoder: &mut Encoder<W>) -> Result<()> {
        if self.tool.is_empty() {
            return Err(schema("the request names no tool"));
        }
        let repo = self.target.cell()?;
        encoder.begin_section(&Header::new("tool_request", REQUEST_FIELDS.iter().copied()))?;
        encoder.write_row([self.tool.as_str(), self.target.scope().as_str(), &repo])
    }

    fn read<S: SectionSource>(source: &mut S) -> Result<Self> {
        let (_, line) = expect_section(source, "tool_request", REQUEST_FIELDS)?;
        let mut requests = Vec::new();
        while let Some(request) = source.with_next_row(|row, fields| {
            let mut cells: BTreeMap<&str, (String, usize)> = BTreeMap::new();
            for ((cell, offset), field) in row.raw_cells().zip(fields) {
                cells.insert(field, (crate::escape::unescape(cell).into_owned(), offset));
            }
            let end = row.as_raw_str().len();
            let mut take = |name| cells.remove(name).unwrap_or((String::new(), end));
            let (tool, tool_at) = take("tool");
            let (scope, scope_at) = take("scope");
            let (repo, repo_at) = take("repo");
            if tool.is_empty() {
                return Err(schema("the request names no tool").or_position(row.position(tool_at)));
            }
            let scope = scope
                .parse::<Scope>()
                .map_err(|e| e.or_position(row.position(scope_at)))?;
            let target = RepoTarget::parse(scope, &repo)
                .map_err(|e| e.or_position(row.position(repo_at)))?;
            Ok(ToolRequest { tool, target })
        })? {
            requests.push(request);
        }
        match requests.len() {
            1 => Ok(requests.remove(0)),
            found => Err(Error::at(
                ErrorKind::RowCount {
                    tool: "tool_request".into(),
                    expected: "1".into(),
                    found: found as u64,
                },
                line,
                1,
            )),
        }
    }
}

/// The `error` envelope a server returns instead of a tool result: `fields=code,message,detail`,
/// exactly one row, `code` non-empty.
///
/// ```
/// use agentwire_gcx1::{ErrorEnvelope, Layout, ERR_CODE_MISSING_REPO_LIST};
///
/// let envelope = ErrorEnvelope {
///     code: ERR_CODE_MISSING_REPO_LIST.into(),
///     message: "fan-out tool needs a repo list".into(),
///     detail: "pass repo: [\"*\"] for every repo".into(),
/// };
/// assert_eq!(
///     envelope.to_gcx()?,
///     "GCX1 tool=error fields=code,message,detail\n\
///      missing_repo_list\tfan-out tool needs a repo list\tpass repo: [\"*\"] for every repo\n"
/// );
/// # Ok::<(), agentwire_gcx1::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ErrorEnvelope {
    /// The error code, one of the `ERR_CODE_*` constants for the codes GCX1 v1 defines.
    pub code: String,
    /// A human-readable message.
    pub message: String,
    /// Free-form detail.
    pub detail: String,
}

const ERROR_FIELDS: &[&str] = &["code", "message", "detail"];

impl ErrorEnvelope {
    fn write<W: Write>(&self, encoder: &mut Encoder<W>) -> Result<()> {
        if self.code.is_empty() {
            return Err(schema("an error envelope needs a non-empty code"));
        }
        encoder.begin_section(&Header::new("error", ERROR_FIELDS.iter().copied()))?;
        encoder.serialize_row(self)
    }

    fn read<S: SectionSource>(source: &mut S) -> Result<Self> {
        let (_, line) = expect_section(source, "error", ERROR_FIELDS)?;
        let mut rows: Vec<ErrorEnvelope> = crate::layouts::read_rows(source)?;
        if rows.len() != 1 {
            return Err(Error::at(
                ErrorKind::RowCount {
                    tool: "error".into(),
                    expected: "1".into(),
                    found: rows.len() as u64,
                },
                line,
                1,
            ));
        }
        let envelope = rows.remove(0);
        if envelope.code.is_empty() {
            return Err(Error::at(
                ErrorKind::Schema("an error envelope needs a non-empty code".into()),
                line + 1,
                1,
            ));
        }
        Ok(envelope)
    }
}

macro_rules! workspace_layout {
    ($($t:ty),* $(,)?) => {$(
        impl Layout for $t {
            fn encode<W: Write>(&self, encoder: &mut Encoder<W>) -> Result<()> {
                let result = self.write(encoder);
                result.map_err(|e| e.or_position(Position::new(encoder.lines() + 1, 1)))
            }

            fn decode<R: BufRead>(decoder: &mut Decoder<R>) -> Result<Self> {
                Self::read(decoder)
            }

            fn decode_str(decoder: &mut StrDecoder<'_>) -> Result<Self> {
                Self::read(decoder)
            }
        }
    )*};
}

workspace_layout!(ToolDefinitions, ToolRequest, ErrorEnvelope,);

/// A protocol error code of GCX1 v1, returned by [`check_call`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CallErrorCode {
    /// [`ERR_CODE_UNKNOWN_REPO`].
    UnknownRepo,
    /// [`ERR_CODE_MISSING_REPO_LIST`].
    MissingRepoList,
    /// [`ERR_CODE_MISSING_REPO`].
    MissingRepo,
    /// [`ERR_CODE_REPO_NOT_ALLOWED`].
    RepoNotAllowed,
    /// [`ERR_CODE_WRONG_REPO_SHAPE`].
    WrongRepoShape,
}

impl CallErrorCode {
    /// The code as written in an `error` envelope.
    pub fn as_str(self) -> &'static str {
        match self {
            CallErrorCode::UnknownRepo => ERR_CODE_UNKNOWN_REPO,
            CallErrorCode::MissingRepoList => ERR_CODE_MISSING_REPO_LIST,
            CallErrorCode::MissingRepo => ERR_CODE_MISSING_REPO,
            CallErrorCode::RepoNotAllowed => ERR_CODE_REPO_NOT_ALLOWED,
            CallErrorCode::WrongRepoShape => ERR_CODE_WRONG_REPO_SHAPE,
        }
    }
}

impl fmt::Display for CallErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why [`check_call`] rejected a call; converts into an [`ErrorEnvelope`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CallError {
    /// The protocol error code.
    pub code: CallErrorCode,
    /// A human-readable message.
    pub message: String,
    /// The offending value, when there is one (a repo name, or the parameter as JSON).
    pub detail: String,
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)?;
        if !self.detail.is_empty() {
            write!(f, " ({})", self.detail)?;
        }
        Ok(())
    }
}

impl std::error::Error for CallError {}

impl From<CallError> for ErrorEnvelope {
    fn from(e: CallError) -> Self {
        ErrorEnvelope {
            code: e.code.as_str().to_owned(),
            message: e.message,
            detail: e.detail,
        }
    }
}

fn reject(code: CallErrorCode, message: &str, detail: String) -> CallError {
    CallError {
        code,
        message: message.to_owned(),
        detail,
    }
}

/// Decides whether a call is legal, from the tool definition's `scope`, the call's `repo`
/// argument (`None` when absent; JSON `null` counts as absent) and the workspace's
/// repositories, and resolves the repositories it addresses.
///
/// | scope | `repo` | result |
/// |---|---|---|
/// | `repo` | absent or `""` | `missing_repo` |
/// | `repo` | a workspace repo name | [`RepoTarget::Repo`] |
/// | `repo` | another name | `unknown_repo` |
/// | `repo` | not a string | `wrong_repo_shape` |
/// | `workspace` | absent | [`RepoTarget::Workspace`] |
/// | `workspace` | anything | `repo_not_allowed` |
/// | `fan-out` | absent or `[]` | `missing_repo_list` |
/// | `fan-out` | `["*"]` | [`RepoTarget::Repos`] with every workspace repo |
/// | `fan-out` | an array of workspace repo names | [`RepoTarget::Repos`], duplicates removed, first seen first |
/// | `fan-out` | a name not in the workspace | `unknown_repo` (the first such name) |
/// | `fan-out` | not an array of strings, or `*` beside other names | `wrong_repo_shape` |
///
/// ```
/// use agentwire_gcx1::{check_call, CallErrorCode, RepoTarget, Scope};
/// use serde_json::json;
///
/// let workspace = ["gortex", "gortex-cloud"];
/// assert_eq!(
///     check_call(Scope::FanOut, Some(&json!(["*"])), &workspace),
///     Ok(RepoTarget::Repos(vec!["gortex".into(), "gortex-cloud".into()]))
/// );
/// let err = check_call(Scope::Workspace, Some(&json!("gortex")), &workspace).unwrap_err();
/// assert_eq!(err.code, CallErrorCode::RepoNotAllowed);
/// assert_eq!(err.code.as_str(), "repo_not_allowed");
/// ```
pub fn check_call<S: AsRef<str>>(
    scope: Scope,
    repo: Option<&Value>,
    workspace: &[S],
) -> std::result::Result<RepoTarget, CallError> {
    let repo = repo.filter(|v| !v.is_null());
    let known = |name: &str| workspace.iter().any(|r| r.as_ref() == name);
    match scope {
        Scope::Repo => match repo {
            None => Err(reject(
                CallErrorCode::MissingRepo,
                "this tool works on one repository: pass `repo`",
                String::new(),
            )),
            Some(Value::String(name)) if name.is_empty() => Err(reject(
                CallErrorCode::MissingRepo,
                "this tool works on one repository: pass `repo`",
                String::new(),
            )),
            Some(Value::String(name)) if known(name) => Ok(RepoTarget::Repo(name.clone())),
            Some(Value::String(name)) => Err(reject(
                CallErrorCode::UnknownRepo,
                "the repository is not in this workspace",
                name.clone(),
            )),
            Some(other) => Err(reject(
                CallErrorCode::WrongRepoShape,
                "`repo` must be a repository name (a string) for this tool",
                other.to_string(),
            )),
        },
        Scope::Workspace => match repo {
            None => Ok(RepoTarget::Workspace),
            Some(other) => Err(reject(
                CallErrorCode::RepoNotAllowed,
                "this tool works on the whole workspace: omit `repo`",
                other.to_string(),
            )),
        },
        Scope::FanOut => {
            let items = match repo {
                None => {
                    return Err(reject(
                        CallErrorCode::MissingRepoList,
                        "this tool fans out: pass `repo` as a list of repositories, or [\"*\"]",
                        String::new(),
                    ))
                }
                Some(Value::Array(items)) => items,
                Some(other) => {
                    return Err(reject(
                        CallErrorCode::WrongRepoShape,
                        "`repo` must be a list of repository names for this tool",
                        other.to_string(),
                    ))
                }
            };
            if items.is_empty() {
                return Err(reject(
                    CallErrorCode::MissingRepoList,
                    "this tool fans out: pass `repo` as a list of repositories, or [\"*\"]",
                    "[]".into(),
                ));
            }
            let mut names: Vec<&str> = Vec::with_capacity(items.len());
            for item in items {
                match item {
                    Value::String(name) => names.push(name),
                    other => {
                        return Err(reject(
                            CallErrorCode::WrongRepoShape,
                            "`repo` must be a list of repository names for this tool",
                            other.to_string(),
                        ))
                    }
                }
            }
            if names.contains(&"*") {
                if names.len() == 1 {
                    return Ok(RepoTarget::Repos(
                        workspace.iter().map(|r| r.as_ref().to_owned()).collect(),
                    ));
                }
                return Err(reject(
                    CallErrorCode::WrongRepoShape,
                    "[\"*\"] means every repository and cannot be combined with names",
                    Value::Array(items.clone()).to_string(),
                ));
            }
            if let Some(unknown) = names.iter().find(|n| !known(n)) {
                return Err(reject(
                    CallErrorCode::UnknownRepo,
                    "the repository is not in this workspace",
                    (*unknown).to_owned(),
                ));
            }
            let mut resolved: Vec<String> = Vec::with_capacity(names.len());
            for name in names {
                if !resolved.iter().any(|r| r == name) {
                    resolved.push(name.to_owned());
                }
            }
            Ok(RepoTarget::Repos(resolved))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn request_cells_by_scope() {
        let cases = [
            (RepoTarget::Repo("gortex".into()), "search\trepo\tgortex\n"),
            (RepoTarget::Workspace, "search\tworkspace\t\n"),
            (RepoTarget::AllRepos, "search\tfan-out\t[\"*\"]\n"),
        ];
        for (target, row) in cases {
            let request = ToolRequest {
                tool: "search".into(),
                target,
            };
            let text = request.to_gcx().unwrap();
            assert_eq!(
                text,
                format!("GCX1 tool=tool_request fields=tool,scope,repo\n{row}")
            );
            assert_eq!(ToolRequest::from_gcx(&text).unwrap(), request);
        }
        let bad = |row: &str| {
            ToolRequest::from_gcx(&format!(
                "GCX1 tool=tool_request fields=tool,scope,repo\n{row}\n"
            ))
            .unwrap_err()
        };
        assert_eq!(bad("t\trepo\t").code(), "schema");
        assert_eq!(bad("t\tworkspace\tx").code(), "schema");
        assert_eq!(bad("t\tfan-out\tx").code(), "schema");
        assert_eq!(bad("t\tfan-out\t[\"*\",\"a\"]").code(), "schema");
        assert_eq!(bad("t\tglobal\t").position(), Some(Position::new(2, 3)));
    }

    #[test]
    fn definitions_sorted_and_validated() {
        let defs = ToolDefinitions(vec![
            ToolDefinition {
                name: "b".into(),
                scope: Scope::Repo,
            },
            ToolDefinition {
                name: "B".into(),
                scope: Scope::FanOut,
            },
        ]);
        assert_eq!(
            defs.to_gcx().unwrap(),
            "GCX1 tool=tool_definitions fields=name,scope\nB\tfan-out\nb\trepo\n"
        );
        let dup = ToolDefinitions(vec![defs.0[0].clone(), defs.0[0].clone()]);
        assert_eq!(dup.to_gcx().unwrap_err().code(), "schema");
        let missing =
            ToolDefinitions::from_gcx("GCX1 tool=tool_definitions fields=name,scope\nx\n");
        assert_eq!(missing.unwrap_err().code(), "schema");
    }

    #[test]
    fn legality() {
        let ws = ["a", "b"];
        let code = |scope, repo: Option<Value>| {
            check_call(scope, repo.as_ref(), &ws).map_err(|e| e.code.as_str())
        };
        assert_eq!(code(Scope::Repo, None), Err("missing_repo"));
        assert_eq!(code(Scope::Repo, Some(json!(""))), Err("missing_repo"));
        assert_eq!(code(Scope::Repo, Some(json!("z"))), Err("unknown_repo"));
        assert_eq!(
            code(Scope::Repo, Some(json!(["a"]))),
            Err("wrong_repo_shape")
        );
        assert_eq!(
            code(Scope::Repo, Some(json!("a"))),
            Ok(RepoTarget::Repo("a".into()))
        );
        assert_eq!(
            code(Scope::Workspace, Some(json!(null))),
            Ok(RepoTarget::Workspace)
        );
        assert_eq!(
            code(Scope::Workspace, Some(json!([]))),
            Err("repo_not_allowed")
        );
        assert_eq!(code(Scope::FanOut, None), Err("missing_repo_list"));
        assert_eq!(
            code(Scope::FanOut, Some(json!([]))),
            Err("missing_repo_list")
        );
        assert_eq!(
            code(Scope::FanOut, Some(json!("a"))),
            Err("wrong_repo_shape")
        );
        assert_eq!(
            code(Scope::FanOut, Some(json!([1]))),
            Err("wrong_repo_shape")
        );
        assert_eq!(
            code(Scope::FanOut, Some(json!(["*", "a"]))),
            Err("wrong_repo_shape")
        );
        assert_eq!(
            code(Scope::FanOut, Some(json!(["a", "z"]))),
            Err("unknown_repo")
        );
        assert_eq!(
            code(Scope::FanOut, Some(json!(["b", "a", "b"]))),
            Ok(RepoTarget::Repos(vec!["b".into(), "a".into()]))
        );
        let envelope: ErrorEnvelope = check_call(Scope::Repo, None, &ws).unwrap_err().into();
        assert_eq!(envelope.code, ERR_CODE_MISSING_REPO);
    }
}
