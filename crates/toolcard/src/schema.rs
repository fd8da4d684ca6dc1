//! Argument validation against a tool's input schema (§4.4), behind the `schema` feature.
//!
//! With the feature, schemas are compiled by the `jsonschema` crate (no remote `$ref`
//! resolution, no file access). Without it, a tool with an input schema cannot be checked,
//! and [`validate`] says so with `VALIDATION_UNAVAILABLE`.

use serde_json::Value;

use crate::error::{Error, ErrorKind};
use crate::tool_id::ToolId;

/// A compiled schema, or the compiler's message.
#[cfg(feature = "schema")]
pub(crate) type Compiled = Result<jsonschema::Validator, String>;

/// Nothing to compile without a validator.
#[cfg(not(feature = "schema"))]
pub(crate) type Compiled = ();

#[cfg(feature = "schema")]
pub(crate) fn compile(schema: &Value) -> Compiled {
    jsonschema::validator_for(schema).map_err(|e| e.to_string())
}

#[cfg(not(feature = "schema"))]
pub(crate) fn compile(_schema: &Value) -> Compiled {}

#[cfg(feature = "schema")]
pub(crate) fn validate(compiled: &Compiled, tool_id: &ToolId, args: &Value) -> Result<(), Error> {
    use crate::catalog::MAX_VIOLATIONS;
    use crate::error::Violation;

    let validator = match compiled {
        Ok(validator) => validator,
        Err(message) => {
            return Err(Error::new(ErrorKind::SchemaInvalid {
                tool_id: tool_id.to_string(),
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
    let mut message = format!("arguments do not match the input schema of {tool_id}: ");
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

#[cfg(not(feature = "schema"))]
pub(crate) fn validate(_compiled: &Compiled, tool_id: &ToolId, _args: &Value) -> Result<(), Error> {
    Err(Error::new(ErrorKind::ValidationUnavailable {
        tool_id: tool_id.to_string(),
    }))
}
