//! Totals and medians per format, over the items each format applies to.

use agentwire_tokens::Tokenizer;
use serde::Serialize;

use super::measure::{Column, ItemResult, RoundTrip};

/// One format's figures over a set of items.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct FormatSummary {
    pub(crate) format: Column,
    pub(crate) label: &'static str,
    /// Items the format applies to and could encode.
    pub(crate) files: usize,
    pub(crate) bytes: usize,
    pub(crate) cl100k: usize,
    pub(crate) o200k: usize,
    /// Total tokens ÷ compact JSON's total tokens over the same items, minus 1.
    pub(crate) vs_compact: f64,
    /// Total tokens ÷ pretty JSON's total tokens over the same items, minus 1.
    pub(crate) vs_pretty: f64,
    /// The median of the per-item ratios to compact JSON, minus 1.
    pub(crate) median_vs_compact: f64,
    /// The median of the per-item ratios to pretty JSON, minus 1.
    pub(crate) median_vs_pretty: f64,
    pub(crate) exact: usize,
    pub(crate) equivalent: usize,
    /// Round trips that failed plus items the format could not encode.
    pub(crate) failed: usize,
}

/// A per-item ratio: `tokens / base - 1`.
pub(crate) fn saving(tokens: usize, base: usize) -> f64 {
    if base == 0 {
        0.0
    } else {
        tokens as f64 / base as f64 - 1.0
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    }
}

/// The summary of every format that applies to at least one of `results`.
pub(crate) fn summarize(results: &[&ItemResult], tokenizer: Tokenizer) -> Vec<FormatSummary> {
    Column::ALL
        .into_iter()
        .filter_map(|format| {
            let mut s = FormatSummary {
                format,
                label: format.label(),
                files: 0,
                bytes: 0,
                cl100k: 0,
                o200k: 0,
                vs_compact: 0.0,
                vs_pretty: 0.0,
                median_vs_compact: 0.0,
                median_vs_pretty: 0.0,
                exact: 0,
                equivalent: 0,
                failed: 0,
            };
            let (mut base_compact, mut base_pretty, mut total) = (0, 0, 0);
            let (mut ratios_compact, mut ratios_pretty) = (Vec::new(), Vec::new());
            let mut applies = false;
            for r in results {
                if r.failure(format).is_some() {
                    applies = true;
                    s.failed += 1;
                }
                let Some(m) = r.get(format) else { continue };
                applies = true;
                let (Some(compact), Some(pretty)) =
                    (r.get(Column::JsonCompact), r.get(Column::JsonPretty))
                else {
                    continue;
                };
                s.files += 1;
                s.bytes += m.bytes;
                s.cl100k += m.cl100k;
                s.o200k += m.o200k;
                let tokens = m.tokens(tokenizer);
                total += tokens;
                base_compact += compact.tokens(tokenizer);
                base_pretty += pretty.tokens(tokenizer);
                ratios_compact.push(saving(tokens, compact.tokens(tokenizer)));
                ratios_pretty.push(saving(tokens, pretty.tokens(tokenizer)));
                match m.round_trip {
                    RoundTrip::Exact => s.exact += 1,
                    RoundTrip::Equivalent(_) => s.equivalent += 1,
                    RoundTrip::Failed(_) => s.failed += 1,
                }
            }
            s.vs_compact = saving(total, base_compact);
            s.vs_pretty = saving(total, base_pretty);
            s.median_vs_compact = median(ratios_compact);
            s.median_vs_pretty = median(ratios_pretty);
            applies.then_some(s)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_and_savings() {
        assert_eq!(median(vec![]), 0.0);
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(saving(50, 100), -0.5);
        assert_eq!(saving(150, 100), 0.5);
        assert_eq!(saving(1, 0), 0.0);
    }
}
