//! The GCX1 codec family: our own suite `conformance/gcx1/`.
//!
//! | operation | fields | check |
//! |---|---|---|
//! | `encode` | `sections`, `expected` (text) | the encoder writes exactly `expected`, and `expected` decodes to the sections' headers |
//! | `encode-error` | `sections`, `expectedError`, `position`? | the encoder fails with that code (at that line and column) |
//! | `decode` | `input` (text), `expected` (sections with string cells) | both decoders give `expected` |
//! | `error` | `input` or `inputBase64`, `limits`?, `expectedError`, `position`? | decoding fails with that code (at that line and column) |
//! | `encode-any` | `tool`, `input` (JSON), `expected` (text) | the value codec writes exactly `expected`, and `decode-any` gives `input` back |
//! | `encode-any-error` | `tool`, `input` (JSON), `limits`?, `expectedError` | the value codec refuses to write `input` (what it would write, a decoder with the same limits could not read) |
//! | `decode-any` | `input` (text), `expected` (JSON), `tool`? | the value codec reads back `expected` (and the tool name) |
//! | `any-error` | `input` (text), `expectedError`, `position`? | the value codec fails with that code |
//! | `encode-layout` | `layout`, `input` (the layout's JSON form), `expected` (text), `decodesTo`? | the typed layout writes exactly `expected` and reads it back as `input` (or as `decodesTo`, when encoding sorts) |
//! | `decode-layout` | `layout`, `input` (text), `expected` (JSON form) | the typed layout reads `expected` |
//! | `encode-layout-error` | `layout`, `input` (JSON form), `expectedError` | encoding the layout fails with that code |
//! | `decode-layout-error` | `layout`, `input` (text), `expectedError`, `position`? | decoding the layout fails with that code |
//! | `check-call` | `scope`, `repo`? (absent, or any JSON), `workspace`, `expected` or `expectedError` | the legality check resolves the call or rejects it with that protocol code |
//! | `parse-format` | `input`, `expected` (`json`, `gcx` or `text`) | the format selector |
//! | `format-float` | `input` (number), `bits`? (32 or 64), `expected` (text) | Go's shortest `%g` |
//!
//! A section in `sections` is `{tool, fields, meta?, rows}`; each row is an array of cells or
//! `{"comment": text}`. A cell is a string, a number (integers are written in decimal, numbers
//! with a fraction or exponent as `f64`), a boolean, `null` (an empty cell), or
//! `{"f32": number}` / `{"f64": "NaN" | "+Inf" | "-Inf"}` for what JSON cannot spell.
//!
//! Layout names are the tool names: `search_symbols`, `get_symbol_source`, `batch_symbols`,
//! `find_usages`, `get_file_summary`, the `.nodes`/`.edges` graph tools (`get_callers`,
//! `get_call_chain`, `get_dependencies`, `get_dependents`, `find_implementations`,
//! `walk_graph`), `get_editing_context`, `smart_context`, `analyze.dead_code`,
//! `analyze.hotspots`, `analyze.cycles`, `contracts.list`, `contracts.orphans`,
//! `tool_definitions`, `tool_request` and `error`. A layout's JSON form is what the value
//! codec reads its payload into.

use std::collections::BTreeMap;
use std::path::Path;

use base64::Engine as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Number, Value};

use crate::{same_json, same_text, Case, CodecError, Failure, Fixture, Harness, Suite};

/// One GCX1 fixture's operation and fields.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub enum Gcx1Case {
    /// Encode sections and compare the bytes.
    #[serde(rename = "encode")]
    Encode {
        /// The sections to write.
        sections: Vec<SectionSpec>,
        /// The exact text.
        expected: String,
    },
    /// Encoding must fail.
    #[serde(rename = "encode-error")]
    EncodeError {
        /// The sections to write.
        sections: Vec<SectionSpec>,
        /// The error code.
        #[serde(rename = "expectedError")]
        expected_error: String,
        /// Where, if the fixture pins it.
        #[serde(default)]
        position: Option<PositionSpec>,
    },
    /// Decode text into sections of string cells.
    #[serde(rename = "decode")]
    Decode {
        /// GCX1 text.
        input: String,
        /// The sections.
        expected: Vec<DecodedSection>,
    },
    /// Decoding must fail.
    #[serde(rename = "error")]
    Error {
        /// The input as text.
        #[serde(default)]
        input: Option<String>,
        /// The input as base64 bytes, for input that is not UTF-8.
        #[serde(default, rename = "inputBase64")]
        input_base64: Option<String>,
        /// Decoder limits other than the defaults.
        #[serde(default)]
        limits: LimitsSpec,
        /// The error code.
        #[serde(rename = "expectedError")]
        expected_error: String,
        /// Where, if the fixture pins it.
        #[serde(default)]
        position: Option<PositionSpec>,
    },
    /// The generic fallback's exact bytes and round trip.
    #[serde(rename = "encode-any")]
    EncodeAny {
        /// The section's tool name.
        tool: String,
        /// Any JSON value.
        input: Value,
        /// The exact text.
        expected: String,
    },
    /// The value codec must refuse to write the value.
    #[serde(rename = "encode-any-error")]
    EncodeAnyError {
        /// The tool name.
        tool: String,
        /// Any JSON value.
        input: Value,
        /// Limits other than the defaults.
        #[serde(default)]
        limits: LimitsSpec,
        /// The error code.
        #[serde(rename = "expectedError")]
        expected_error: String,
    },
    /// The generic fallback's reading.
    #[serde(rename = "decode-any")]
    DecodeAny {
        /// GCX1 text.
        input: String,
        /// The JSON value.
        expected: Value,
        /// The section's tool name, if the fixture checks it.
        #[serde(default)]
        tool: Option<String>,
    },
    /// The generic fallback must refuse the text.
    #[serde(rename = "any-error")]
    AnyError {
        /// GCX1 text.
        input: String,
        /// The error code.
        #[serde(rename = "expectedError")]
        expected_error: String,
        /// Where, if the fixture pins it.
        #[serde(default)]
        position: Option<PositionSpec>,
    },
    /// A typed layout's exact bytes and round trip.
    #[serde(rename = "encode-layout")]
    EncodeLayout {
        /// The layout's name.
        layout: String,
        /// The layout's JSON form.
        input: Value,
        /// The exact text.
        expected: String,
        /// What `expected` decodes to, when encoding puts `input` in a canonical form (rows
        /// sorted); by default `input` itself.
        #[serde(default, rename = "decodesTo")]
        decodes_to: Option<Value>,
    },
    /// A typed layout's reading.
    #[serde(rename = "decode-layout")]
    DecodeLayout {
        /// The layout's name.
        layout: String,
        /// GCX1 text.
        input: String,
        /// The layout's JSON form.
        expected: Value,
    },
    /// Encoding a typed layout must fail.
    #[serde(rename = "encode-layout-error")]
    EncodeLayoutError {
        /// The layout's name.
        layout: String,
        /// The layout's JSON form.
        input: Value,
        /// The error code.
        #[serde(rename = "expectedError")]
        expected_error: String,
    },
    /// Decoding a typed layout must fail.
    #[serde(rename = "decode-layout-error")]
    DecodeLayoutError {
        /// The layout's name.
        layout: String,
        /// GCX1 text.
        input: String,
        /// The error code.
        #[serde(rename = "expectedError")]
        expected_error: String,
        /// Where, if the fixture pins it.
        #[serde(default)]
        position: Option<PositionSpec>,
    },
    /// The legality of a call for a tool scope.
    #[serde(rename = "check-call")]
    CheckCall {
        /// `repo`, `workspace` or `fan-out`.
        scope: String,
        /// The call's `repo` argument: absent, or any JSON value (`null` included).
        #[serde(default, deserialize_with = "present")]
        repo: Option<Value>,
        /// The workspace's repositories.
        workspace: Vec<String>,
        /// The resolved target: `{"scope": ..., "repo": ...}`.
        #[serde(default)]
        expected: Option<Value>,
        /// The protocol error code.
        #[serde(default, rename = "expectedError")]
        expected_error: Option<String>,
    },
    /// The `format` argument selector.
    #[serde(rename = "parse-format")]
    ParseFormat {
        /// The argument.
        input: String,
        /// `json`, `gcx` or `text`.
        expected: String,
    },
    /// Go's shortest `%g` float layout.
    #[serde(rename = "format-float")]
    FormatFloat {
        /// The number.
        input: Number,
        /// 32 or 64 (default).
        #[serde(default)]
        bits: Option<u32>,
        /// The exact text.
        expected: String,
    },
}

/// Reads a present field (even `null`) as `Some`; an absent one defaults to `None`.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

impl Case for Gcx1Case {
    fn operation(&self) -> &'static str {
        match self {
            Gcx1Case::Encode { .. } => "encode",
            Gcx1Case::EncodeError { .. } => "encode-error",
            Gcx1Case::Decode { .. } => "decode",
            Gcx1Case::Error { .. } => "error",
            Gcx1Case::EncodeAny { .. } => "encode-any",
            Gcx1Case::EncodeAnyError { .. } => "encode-any-error",
            Gcx1Case::DecodeAny { .. } => "decode-any",
            Gcx1Case::AnyError { .. } => "any-error",
            Gcx1Case::EncodeLayout { .. } => "encode-layout",
            Gcx1Case::DecodeLayout { .. } => "decode-layout",
            Gcx1Case::EncodeLayoutError { .. } => "encode-layout-error",
            Gcx1Case::DecodeLayoutError { .. } => "decode-layout-error",
            Gcx1Case::CheckCall { .. } => "check-call",
            Gcx1Case::ParseFormat { .. } => "parse-format",
            Gcx1Case::FormatFloat { .. } => "format-float",
        }
    }
}

/// A section to encode.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SectionSpec {
    /// The tool name.
    pub tool: String,
    /// The field names.
    pub fields: Vec<String>,
    /// Meta pairs.
    #[serde(default)]
    pub meta: BTreeMap<String, String>,
    /// Rows and comments, in order.
    pub rows: Vec<RowSpec>,
}

/// A row to encode, or a comment.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "Value")]
pub enum RowSpec {
    /// A row of cells (see the module documentation for the cell forms).
    Cells(Vec<Value>),
    /// A comment line.
    Comment {
        /// The comment's text.
        comment: String,
    },
}

impl TryFrom<Value> for RowSpec {
    type Error = String;

    fn try_from(value: Value) -> Result<Self, String> {
        match value {
            Value::Array(cells) => Ok(RowSpec::Cells(cells)),
            Value::Object(map) if map.len() == 1 => match map.get("comment") {
                Some(Value::String(comment)) => Ok(RowSpec::Comment {
                    comment: comment.clone(),
                }),
                _ => Err("a row is an array of cells or {\"comment\": text}".into()),
            },
            _ => Err("a row is an array of cells or {\"comment\": text}".into()),
        }
    }
}

/// A decoded section: header and string cells.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecodedSection {
    /// The tool name.
    pub tool: String,
    /// The field names.
    pub fields: Vec<String>,
    /// Meta pairs.
    #[serde(default)]
    pub meta: BTreeMap<String, String>,
    /// The rows, padded to the fields.
    pub rows: Vec<Vec<String>>,
}

/// Decoder limits a fixture overrides; absent ones keep the codec's defaults.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsSpec {
    /// The longest line in bytes.
    #[serde(default)]
    pub max_line_length: Option<usize>,
    /// The most fields per header.
    #[serde(default)]
    pub max_fields: Option<usize>,
    /// The most meta pairs per header.
    #[serde(default)]
    pub max_meta: Option<usize>,
    /// The most omitted trailing cells in total.
    #[serde(default)]
    pub max_padding: Option<u64>,
}

/// A 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PositionSpec {
    /// The line.
    pub line: u64,
    /// The column, in characters.
    pub column: u64,
}

/// A codec error and where it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorAt {
    /// The error.
    pub error: CodecError,
    /// The position, when the codec reports one.
    pub position: Option<(u64, u64)>,
}

impl From<CodecError> for ErrorAt {
    fn from(error: CodecError) -> Self {
        ErrorAt {
            error,
            position: None,
        }
    }
}

impl std::fmt::Display for ErrorAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.error)?;
        if let Some((line, column)) = self.position {
            write!(f, " (line {line}, column {column})")?;
        }
        Ok(())
    }
}

/// What a GCX1 implementation must offer the runner.
pub trait Gcx1Codec: Send + Sync {
    /// Writes the sections.
    fn encode(&self, sections: &[SectionSpec]) -> Result<String, ErrorAt>;
    /// Reads every section, with string cells; implementations with several decoders should
    /// check here that they agree.
    fn decode(&self, input: &[u8], limits: &LimitsSpec) -> Result<Vec<DecodedSection>, ErrorAt>;
    /// The value encoder.
    fn encode_any(&self, tool: &str, value: &Value) -> Result<String, ErrorAt>;
    /// The value encoder with limits other than the defaults.
    fn encode_any_limited(
        &self,
        tool: &str,
        value: &Value,
        limits: &LimitsSpec,
    ) -> Result<String, ErrorAt>;
    /// The generic fallback decoder: the tool name and the value.
    fn decode_any(&self, input: &str) -> Result<(String, Value), ErrorAt>;
    /// Writes a typed layout given its JSON form.
    fn encode_layout(&self, layout: &str, value: &Value) -> Result<String, ErrorAt>;
    /// Reads a typed layout into its JSON form.
    fn decode_layout(&self, layout: &str, input: &str) -> Result<Value, ErrorAt>;
    /// Resolves a call (`{"scope": ..., "repo": ...}`) or rejects it with a protocol code.
    fn check_call(
        &self,
        scope: &str,
        repo: Option<&Value>,
        workspace: &[String],
    ) -> Result<Value, ErrorAt>;
    /// The `format` selector: `json`, `gcx` or `text`.
    fn parse_format(&self, input: &str) -> String;
    /// Go's shortest `%g` of a float of `bits` (32 or 64).
    fn format_float(&self, value: &Number, bits: u32) -> Result<String, ErrorAt>;
}

/// A harness that checks GCX1 fixtures against `codec`; add suites with [`Harness::suite`].
pub fn harness(codec: impl Gcx1Codec + 'static) -> Harness<Gcx1Case> {
    Harness::new(move |fixture, _suite| check(&codec, fixture))
}

/// Our GCX1 suite, `conformance/gcx1/`, with its expected-failures file
/// `conformance/gcx1.expected-failures`.
pub fn suite(workspace_root: &Path) -> Suite {
    Suite::new("gcx1", workspace_root.join("conformance/gcx1"))
        .expected_failures(workspace_root.join("conformance/gcx1.expected-failures"))
}

/// Checks one GCX1 fixture.
pub fn check(codec: &dyn Gcx1Codec, fixture: &Fixture<Gcx1Case>) -> Result<(), Failure> {
    match &fixture.case {
        Gcx1Case::Encode { sections, expected } => {
            let actual = codec
                .encode(sections)
                .map_err(|e| codec_failure("encode", &e))?;
            same_text("encode", expected, &actual)?;
            let decoded = codec
                .decode(expected.as_bytes(), &LimitsSpec::default())
                .map_err(|e| codec_failure("decode of the expected text", &e))?;
            let headers: Vec<Value> = sections
                .iter()
                .map(|s| header_json(&s.tool, &s.fields, &s.meta))
                .collect();
            let decoded: Vec<Value> = decoded
                .iter()
                .map(|s| header_json(&s.tool, &s.fields, &s.meta))
                .collect();
            same_json(
                "headers decoded from the expected text",
                &Value::Array(headers),
                &Value::Array(decoded),
            )
        }
        Gcx1Case::EncodeError {
            sections,
            expected_error,
            position,
        } => expect_error(
            "encode",
            expected_error,
            *position,
            codec.encode(sections).map(drop),
        ),
        Gcx1Case::Decode { input, expected } => {
            let actual = codec
                .decode(input.as_bytes(), &LimitsSpec::default())
                .map_err(|e| codec_failure("decode", &e))?;
            if &actual == expected {
                Ok(())
            } else {
                Err(Failure::json_mismatch(
                    "decode",
                    &to_json(expected),
                    &to_json(&actual),
                ))
            }
        }
        Gcx1Case::Error {
            input,
            input_base64,
            limits,
            expected_error,
            position,
        } => {
            let bytes = match (input, input_base64) {
                (Some(text), None) => text.clone().into_bytes(),
                (None, Some(b64)) => base64::engine::general_purpose::STANDARD
                    .decode(b64)
                    .map_err(|e| Failure::new(format!("fixture: bad inputBase64: {e}")))?,
                _ => {
                    return Err(Failure::new(
                        "fixture: an error case needs exactly one of `input` and `inputBase64`",
                    ))
                }
            };
            expect_error(
                "decode",
                expected_error,
                *position,
                codec.decode(&bytes, limits).map(drop),
            )
        }
        Gcx1Case::EncodeAny {
            tool,
            input,
            expected,
        } => {
            let actual = codec
                .encode_any(tool, input)
                .map_err(|e| codec_failure("encode_any", &e))?;
            same_text("encode_any", expected, &actual)?;
            let (decoded_tool, decoded) = codec
                .decode_any(expected)
                .map_err(|e| codec_failure("decode_any of the expected text", &e))?;
            same_text("decoded tool name", tool, &decoded_tool)?;
            same_json("decode_any of the expected text", input, &decoded)
        }
        Gcx1Case::EncodeAnyError {
            tool,
            input,
            limits,
            expected_error,
        } => expect_error(
            "encode_any",
            expected_error,
            None,
            codec.encode_any_limited(tool, input, limits).map(drop),
        ),
        Gcx1Case::DecodeAny {
            input,
            expected,
            tool,
        } => {
            let (actual_tool, actual) = codec
                .decode_any(input)
                .map_err(|e| codec_failure("decode_any", &e))?;
            if let Some(tool) = tool {
                same_text("decoded tool name", tool, &actual_tool)?;
            }
            same_json("decode_any", expected, &actual)
        }
        Gcx1Case::AnyError {
            input,
            expected_error,
            position,
        } => expect_error(
            "decode_any",
            expected_error,
            *position,
            codec.decode_any(input).map(drop),
        ),
        Gcx1Case::EncodeLayout {
            layout,
            input,
            expected,
            decodes_to,
        } => {
            let actual = codec
                .encode_layout(layout, input)
                .map_err(|e| codec_failure("layout encode", &e))?;
            same_text("layout encode", expected, &actual)?;
            let decoded = codec
                .decode_layout(layout, expected)
                .map_err(|e| codec_failure("layout decode of the expected text", &e))?;
            same_json(
                "layout decode of the expected text",
                decodes_to.as_ref().unwrap_or(input),
                &decoded,
            )
        }
        Gcx1Case::DecodeLayout {
            layout,
            input,
            expected,
        } => {
            let actual = codec
                .decode_layout(layout, input)
                .map_err(|e| codec_failure("layout decode", &e))?;
            same_json("layout decode", expected, &actual)
        }
        Gcx1Case::EncodeLayoutError {
            layout,
            input,
            expected_error,
        } => expect_error(
            "layout encode",
            expected_error,
            None,
            codec.encode_layout(layout, input).map(drop),
        ),
        Gcx1Case::DecodeLayoutError {
            layout,
            input,
            expected_error,
            position,
        } => expect_error(
            "layout decode",
            expected_error,
            *position,
            codec.decode_layout(layout, input).map(drop),
        ),
        Gcx1Case::CheckCall {
            scope,
            repo,
            workspace,
            expected,
            expected_error,
        } => {
            let result = codec.check_call(scope, repo.as_ref(), workspace);
            match (expected, expected_error) {
                (Some(expected), None) => {
                    let actual = result.map_err(|e| codec_failure("check_call", &e))?;
                    same_json("check_call", expected, &actual)
                }
                (None, Some(code)) => expect_error("check_call", code, None, result.map(drop)),
                _ => Err(Failure::new(
                    "fixture: a check-call case needs exactly one of `expected` and `expectedError`",
                )),
            }
        }
        Gcx1Case::ParseFormat { input, expected } => {
            same_text("parse_format", expected, &codec.parse_format(input))
        }
        Gcx1Case::FormatFloat {
            input,
            bits,
            expected,
        } => {
            let actual = codec
                .format_float(input, bits.unwrap_or(64))
                .map_err(|e| codec_failure("format_float", &e))?;
            same_text("format_float", expected, &actual)
        }
    }
}

fn header_json(tool: &str, fields: &[String], meta: &BTreeMap<String, String>) -> Value {
    serde_json::json!({"tool": tool, "fields": fields, "meta": meta})
}

fn to_json<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

fn codec_failure(what: &str, error: &ErrorAt) -> Failure {
    Failure::new(format!("{what} failed: {error}"))
}

fn expect_error(
    what: &str,
    code: &str,
    position: Option<PositionSpec>,
    result: Result<(), ErrorAt>,
) -> Result<(), Failure> {
    match result {
        Ok(()) => Err(Failure::new(format!(
            "{what} succeeded, but the fixture expects error `{code}`"
        ))),
        Err(e) if e.error.code() != Some(code) => Err(Failure::new(format!(
            "{what} failed with the wrong error: expected `{code}`, got {e}"
        ))),
        Err(e) => match position {
            Some(p) if e.position != Some((p.line, p.column)) => Err(Failure::new(format!(
                "{what} failed with `{code}` as expected, but at the wrong position: expected \
                 line {}, column {}; got {e}",
                p.line, p.column
            ))),
            _ => Ok(()),
        },
    }
}
