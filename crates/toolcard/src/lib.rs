//! WIP
#![deny(missing_docs)]
#![warn(clippy::unwrap_used)]

mod canonical;
mod card;
mod error;
mod tool_id;
mod truncate;

pub use card::{
    CardKind, ChoiceCard, ChoiceCardBuilder, CACHE_BREAKPOINT_ID, CARD_HARD_CAP_TOKENS,
    CARD_TARGET_TOKENS, MAX_NAME_CHARS, MAX_TAGS, MAX_TAG_CHARS, RESPONSE_PREAMBLE_TOKENS,
};
pub use error::{Error, ErrorCode, ErrorKind, IdProblem, Violation};
pub use tool_id::{format_tool_id, parse_tool_id, ToolId, ToolIdParts, MAX_TOOL_ID_LEN};
pub use truncate::{truncate_description, ELLIPSIS};
