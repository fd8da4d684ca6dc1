//! The error a codec adapter reports back to the runner.

use std::fmt;

/// An error from the codec under test, as an adapter reports it: the spec's error code, when
/// the codec assigns one, and a human-readable message (ideally with line and column).
///
/// Error fixtures match on [`CodecError::code`] exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodecError {
    code: Option<String>,
    message: String,
}

impl CodecError {
    /// An error with a spec error code, such as `invalid_escape`.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            code: Some(code.into()),
            message: message.into(),
        }
    }

    /// An error without a code, for failures outside the spec's taxonomy.
    pub fn message(message: impl Into<String>) -> Self {
        Self {
            code: None,
            message: message.into(),
        }
    }

    /// The codec does not implement an operation yet.
    pub fn unsupported(operation: &str) -> Self {
        Self::message(format!("not implemented: {operation}"))
    }

    /// The error code, if any.
    pub fn code(&self) -> Option<&str> {
        self.code.as_deref()
    }

    /// The message.
    pub fn text(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for CodecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.code {
            Some(code) => write!(f, "[{code}] {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for CodecError {}
