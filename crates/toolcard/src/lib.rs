//! The gateway surface for MCP tool catalogs, as specified by the Gateway Surface
//! Specification: stable tool ids, ChoiceCards within exact token budgets, path browsing,
//! ranked query browsing, cache-stable ordering, hydration and argument validation.
//!
//! Everything a transparent MCP proxy or a three-meta-tool gateway (`tool_browse`,
//! `tool_execute`, `tool_view`) needs, independent of transport:
//!
//! | spec | here |
//! |---|---|
//! | §1 tool_id | [`ToolId`], [`ToolIdParts`], [`parse_tool_id`], [`format_tool_id`], [`ToolDefinition::derive_id`], [`canonical_shape`], [`hash8`] |
//! | §1.5 collisions | [`CatalogBuilder::build`] ([`ErrorKind::Collision`]) |
//! | §2 ChoiceCard | [`ChoiceCard`] (rendering in [`ChoiceCard::text`]), [`truncate_description`] |
//! | §3 tool_browse | [`BrowseRequest`], [`Catalog::browse`], [`parse_path`], [`ChoiceGraph`] |
//! | §1.5 and §2.3 errors without losing the catalog | [`Catalog::skipped`], [`Skipped`] |
//! | §3.4 errors | [`Error::code`], [`Error::to_json`] |
//! | §4 schema exposure | [`Catalog::discovery`], [`Catalog::hydrate`], [`Catalog::validate_args`] (feature `schema`) |
//! | §4.1 names for strict MCP clients | [`ToolId::to_mcp_name`], [`ToolId::from_mcp_name`], [`Catalog::resolve`] |
//! | §4.1 and §4.2 surfaces | [`Gateway`] ([`Mode::Proxy`], [`Mode::Gateway`]), [`tool_browse_definition`] and the other meta-tool definitions |
//! | §4.2 firewall, ResultEnvelope, `tool_view` | [`ResultEnvelope`], [`FirewallOptions`], [`ArtifactStore`], [`Selector`] |
//! | several upstreams, refreshed | [`CatalogBuilder::add_tools_list`], [`Catalog::with_server`], [`Gateway::refresh`] |
//! | §5 cache-stable order | [`Session::cache_stable`], [`Session::set_catalog`] |
//!
//! # Features
//!
//! - `schema` (default): argument validation against input schemas with the `jsonschema`
//!   crate. It turns on serde_json's `float_roundtrip` for the whole build; without the
//!   feature there is no validator (and 36 crates in the tree instead of 80), and
//!   [`Catalog::validate_args`] reports `VALIDATION_UNAVAILABLE` for a tool that has a schema.
//!
//! Token counts are exact cl100k_base counts (through `agentwire-tokens`, offline), of
//! exactly the text an agent receives: the budget of §2.3 is measured on
//! [`BrowseResponse::text`], which is what a gateway sends.
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use agentwire_toolcard::{BrowseRequest, Catalog, Session};
//! use serde_json::json;
//!
//! // An upstream `tools/list` result.
//! let list = json!({"tools": [
//!     {"name": "github.create_issue", "description": "Create an issue. Needs a title.",
//!      "inputSchema": {"type": "object",
//!                      "properties": {"repo": {"type": "string"}, "title": {"type": "string"}},
//!                      "required": ["repo", "title"]},
//!      "_meta": {"version": "1.4.0"}},
//!     {"name": "slack_send_message", "description": "Send a message to a channel.",
//!      "inputSchema": {"type": "object",
//!                      "properties": {"channel": {"type": "string"}, "text": {"type": "string"}},
//!                      "required": ["channel", "text"]}},
//!     {"name": "read_file", "description": "Read a file from disk.",
//!      "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}},
//!                      "required": ["path"]},
//!      "annotations": {"readOnlyHint": true}}
//! ]});
//! let catalog = Arc::new(Catalog::from_tools_list(&list)?);
//! let ids: Vec<&str> = catalog.tools().map(|t| t.id().as_str()).collect();
//! assert_eq!(ids, ["github:create_issue@1.4.0", "mcp:read_file#85b56782",
//!                  "slack:slack_send_message#283a5dcf"]);
//!
//! // tool_browse, as the agent sees it.
//! let mut session = Session::new(Arc::clone(&catalog));
//! let response = session.browse(&BrowseRequest::query("send a slack message"))?;
//! assert_eq!(response.text(), "\
//! tool_browse: 1 tool, best match first
//! slack:slack_send_message#283a5dcf (tool) — Send a message to a channel. side-effects
//! ");
//! assert!(response.tokens() <= 80 * 1 + 32);
//!
//! // tool_execute checks the arguments before anything goes upstream.
//! let error = session
//!     .validate_args("slack:slack_send_message#283a5dcf", &json!({"channel": "#general"}))
//!     .unwrap_err();
//! // (VALIDATION_UNAVAILABLE when built without the `schema` feature)
//! assert_eq!(error.code(), if cfg!(feature = "schema") { "ARGS_INVALID" } else { "VALIDATION_UNAVAILABLE" });
//! # Ok::<(), agentwire_toolcard::Error>(())
//! ```
#![deny(missing_docs)]
#![warn(clippy::unwrap_used)]

mod artifact;
mod browse;
mod canonical;
mod card;
mod catalog;
mod error;
mod firewall;
mod gateway;
mod graph;
mod mcp_name;
mod path;
mod rank;
mod schema;
mod tool;
mod tool_id;
mod truncate;

pub use artifact::{Artifact, ArtifactContent, ArtifactStore, Selector, StoreLimits, ViewPage};
pub use browse::{
    BrowseRequest, BrowseResponse, Session, DEFAULT_PAGE_SIZE, DEFAULT_TOP_K, MAX_QUERY_BYTES,
    MAX_TOP_K,
};
pub use card::{
    CardKind, ChoiceCard, ChoiceCardBuilder, CACHE_BREAKPOINT_ID, CARD_HARD_CAP_TOKENS,
    CARD_TARGET_TOKENS, MAX_NAME_CHARS, MAX_TAGS, MAX_TAG_CHARS, RESPONSE_PREAMBLE_TOKENS,
};
pub use catalog::{
    Catalog, CatalogBuilder, CatalogTool, DiscoveryEntry, Hydration, NameEncoding, Skipped,
    MAX_VIOLATIONS,
};
pub use error::{Error, ErrorCode, ErrorKind, IdProblem, Violation};
pub use firewall::{
    ArtifactRef, Cl100k, FirewallOptions, FirewallStats, Provenance, ResultEnvelope, TokenCounter,
};
pub use gateway::{
    tool_browse_definition, tool_execute_definition, tool_hydrate_definition, tool_view_definition,
    Dispatch, Gateway, GatewayOptions, Mode, Refresh, UpstreamCall, UpstreamFailure, TOOL_BROWSE,
    TOOL_EXECUTE, TOOL_HYDRATE, TOOL_VIEW,
};
pub use graph::{ChoiceGraph, GraphNode, NodeKind, CLUSTER_THRESHOLD};
pub use mcp_name::{is_mcp_tool_name, MAX_MCP_NAME_LEN};
pub use path::{parse_path, BrowsePath};
pub use tool::{canonical_shape, hash8, Annotations, ToolDefinition, FALLBACK_NAMESPACE};
pub use tool_id::{format_tool_id, parse_tool_id, ToolId, ToolIdParts, MAX_TOOL_ID_LEN};
pub use truncate::{truncate_description, ELLIPSIS};

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
