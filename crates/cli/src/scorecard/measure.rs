//! Measuring one corpus item in every applicable format: the encoded text's bytes and tokens,
//! and whether it decodes back to the input.

use agentwire_tokens::Tokenizer;
use serde::Serialize;
use serde_json::Value;

use super::corpus::Item;
use crate::codec;
use crate::json_cmp::{first_difference, Numbers};

/// A column of the scorecard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Column {
    JsonPretty,
    JsonCompact,
    Gcx1,
    GcfGeneric,
    /// GCF generic, the encoding with the fewest tokens for the scorecard's tokenizer.
    GcfFewest,
    /// The `gcf` crate 3.1.0's `encode_generic`: what today's producers write.
    GcfCrate,
    GcfGraph,
    Toon,
}

impl Column {
    pub(crate) const ALL: [Column; 8] = [
        Column::JsonPretty,
        Column::JsonCompact,
        Column::Gcx1,
        Column::GcfGeneric,
        Column::GcfFewest,
        Column::GcfCrate,
        Column::GcfGraph,
        Column::Toon,
    ];

    pub(crate) fn label(self) -> &'static str {
        match self {
            Column::JsonPretty => "JSON pretty",
            Column::JsonCompact => "JSON compact",
            Column::Gcx1 => "GCX1",
            Column::GcfGeneric => "GCF generic",
            Column::GcfFewest => "GCF fewest",
            Column::GcfCrate => "gcf 3.1.0",
            Column::GcfGraph => "GCF graph",
            Column::Toon => "TOON",
        }
    }

    fn applies_to(self, item: &Item) -> bool {
        self != Column::GcfGraph || item.graph
    }
}

/// Whether a format gave the input back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "result", content = "detail", rename_all = "snake_case")]
pub(crate) enum RoundTrip {
    /// Decoding gave a value equal to the input.
    Exact,
    /// Equal as JSON, not as `serde_json::Value`: numbers changed form (`1.0` became `1`), or
    /// a graph's symbols and edges were reordered into the profile's order.
    Equivalent(String),
    /// Decoding failed or gave something else: the first difference.
    Failed(String),
}

/// One format's figures for one item.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Measurement {
    pub(crate) format: Column,
    /// What was used: the GCX1 layout or fallback, the JSON indentation, ...
    pub(crate) variant: String,
    pub(crate) bytes: usize,
    pub(crate) cl100k: usize,
    pub(crate) o200k: usize,
    pub(crate) round_trip: RoundTrip,
}

impl Measurement {
    pub(crate) fn tokens(&self, tokenizer: Tokenizer) -> usize {
        match tokenizer {
            Tokenizer::O200kBase => self.o200k,
            _ => self.cl100k,
        }
    }
}

/// A format that could not encode the item at all.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Failure {
    pub(crate) format: Column,
    pub(crate) error: String,
}

/// Every applicable format's figures for one item, in [`Column::ALL`] order.
#[derive(Debug, Clone)]
pub(crate) struct ItemResult {
    pub(crate) item: Item,
    pub(crate) results: Vec<Result<Measurement, Failure>>,
}

impl ItemResult {
    pub(crate) fn get(&self, column: Column) -> Option<&Measurement> {
        self.results
            .iter()
            .find_map(|r| r.as_ref().ok().filter(|m| m.format == column))
    }

    pub(crate) fn failure(&self, column: Column) -> Option<&Failure> {
        self.results
            .iter()
            .find_map(|r| r.as_ref().err().filter(|f| f.format == column))
    }
}

/// Measures `item` in every applicable format (the fewest-tokens GCF for `tokenizer`).
pub(crate) fn measure(item: Item, tokenizer: Tokenizer) -> ItemResult {
    let results = Column::ALL
        .into_iter()
        .filter(|c| c.applies_to(&item))
        .map(|column| {
            // A codec that panics on an item is a failed measurement, not a failed run (the
            // panic hook has printed its message).
            std::panic::catch_unwind(|| encode_and_decode(column, &item, tokenizer))
                .unwrap_or_else(|_| Err("the codec panicked".to_owned()))
                .map(|(variant, text, round_trip)| Measurement {
                    format: column,
                    variant,
                    bytes: text.len(),
                    cl100k: Tokenizer::Cl100kBase.count(&text),
                    o200k: Tokenizer::O200kBase.count(&text),
                    round_trip,
                })
                .map_err(|error| Failure {
                    format: column,
                    error,
                })
        })
        .collect();
    ItemResult { item, results }
}

/// The item in `column`'s format: `(variant, text, round trip)`.
fn encode_and_decode(
    column: Column,
    item: &Item,
    tokenizer: Tokenizer,
) -> Result<(String, String, RoundTrip), String> {
    let input = &item.response;
    let json_back = |text: &str| {
        serde_json::from_str::<Value>(text)
            .map(|back| compare(input, &back))
            .unwrap_or_else(|e| RoundTrip::Failed(e.to_string()))
    };
    match column {
        Column::JsonPretty => {
            let text = serde_json::to_string_pretty(input).map_err(|e| e.to_string())?;
            let round_trip = json_back(&text);
            Ok(("2-space indent".into(), text, round_trip))
        }
        Column::JsonCompact => {
            let text = serde_json::to_string(input).map_err(|e| e.to_string())?;
            let round_trip = json_back(&text);
            Ok(("no whitespace".into(), text, round_trip))
        }
        Column::Gcx1 => {
            let tool = item.gcx1_layout.as_deref().unwrap_or(&item.tool);
            let text = codec::encode_gcx1(Some(tool), input, Default::default())
                .map_err(|e| e.to_string())?;
            let round_trip = match agentwire_gcx1::decode_any(&text) {
                Ok(back) => compare(input, &back),
                Err(e) => RoundTrip::Failed(codec::gcx1_message(&e)),
            };
            let what = if agentwire_gcx1::known_tools().any(|known| known == tool) {
                format!("`{tool}` layout")
            } else {
                "shape-aware".to_owned()
            };
            Ok((what, text, round_trip))
        }
        Column::GcfGeneric => {
            let text = codec::encode_gcf(input).map_err(|e| e.to_string())?;
            let round_trip = gcf_back(input, &text);
            Ok(("generic profile, canonical".into(), text, round_trip))
        }
        Column::GcfFewest => {
            let options = agentwire_gcf::EncoderOptions::new().fewest_tokens(tokenizer);
            let text = codec::encode_gcf_with(input, &options).map_err(|e| e.to_string())?;
            let round_trip = gcf_back(input, &text);
            Ok((
                format!("generic profile, fewest {} tokens", tokenizer.short_name()),
                text,
                round_trip,
            ))
        }
        Column::GcfCrate => {
            let text = gcf::encode_generic(input)?;
            let round_trip = match gcf::decode_generic(&text) {
                Ok(back) => compare(input, &back),
                Err(e) => RoundTrip::Failed(e),
            };
            Ok(("gcf 3.1.0, encode_generic".into(), text, round_trip))
        }
        Column::GcfGraph => {
            let (graph, _) = codec::graph_of(input).map_err(|e| e.to_string())?;
            let text = codec::encode_gcf_graph(&graph).map_err(|e| e.to_string())?;
            let round_trip = match agentwire_gcf::decode_graph(&text) {
                Ok(decoded) => match serde_json::to_value(&decoded) {
                    Ok(back) => match compare(input, &back) {
                        RoundTrip::Failed(difference) => {
                            let (mut a, mut b) = (graph.clone(), decoded);
                            a.sort_canonical();
                            b.sort_canonical();
                            if a == b {
                                RoundTrip::Equivalent(
                                    "symbols and edges reordered into the graph profile's order"
                                        .into(),
                                )
                            } else {
                                RoundTrip::Failed(difference)
                            }
                        }
                        other => other,
                    },
                    Err(e) => RoundTrip::Failed(e.to_string()),
                },
                Err(e) => RoundTrip::Failed(e.to_string()),
            };
            Ok(("graph profile".into(), text, round_trip))
        }
        Column::Toon => {
            let text = codec::encode_toon(input).map_err(|e| e.to_string())?;
            let round_trip = match toon_format::decode_default::<Value>(&text) {
                Ok(back) => compare(input, &back),
                Err(e) => RoundTrip::Failed(e.to_string()),
            };
            Ok(("toon-format 0.7, defaults".into(), text, round_trip))
        }
    }
}

/// How our GCF text decodes against the input.
fn gcf_back(input: &Value, text: &str) -> RoundTrip {
    match agentwire_gcf::from_str::<Value>(text) {
        Ok(back) => compare(input, &back),
        Err(e) => RoundTrip::Failed(e.to_string()),
    }
}

/// Exact, equal as JSON numbers, or the first difference.
fn compare(input: &Value, back: &Value) -> RoundTrip {
    match first_difference(input, back, Numbers::Exact) {
        None => RoundTrip::Exact,
        Some(exact) => match first_difference(input, back, Numbers::Value) {
            None => RoundTrip::Equivalent(format!("numbers change form, e.g. {exact}")),
            Some(difference) => RoundTrip::Failed(difference),
        },
    }
}
