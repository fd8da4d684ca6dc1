//! The SVG bar chart of tokens per format: one group of bars per corpus category (and one for
//! all files), each bar labelled with its tokens and its change against compact JSON.
//!
//! Written by hand rather than with a plotting crate: the chart is a few dozen rectangles and
//! labels, and doing it here keeps the output byte-for-byte deterministic (the README and
//! docs embed it and are regenerated in review), puts every label exactly where it belongs
//! without font metrics (a plotting crate without a font backend can only guess text sizes),
//! keeps the SVG small and readable, and adds no dependency to the command.

use std::fmt::Write as _;

use agentwire_tokens::Tokenizer;

use super::measure::Column;
use super::render::{percent, thousands};
use super::summary::FormatSummary;

/// One group of bars: a title and its formats' summaries.
#[derive(Debug)]
pub(crate) struct Group<'a> {
    pub(crate) title: String,
    pub(crate) summary: &'a [FormatSummary],
}

const WIDTH: u32 = 760;
const LABEL_WIDTH: u32 = 120;
const BAR_AREA: u32 = 440;
const BAR: u32 = 18;
const GAP: u32 = 5;
const GROUP_TITLE: u32 = 30;

fn color(column: Column) -> &'static str {
    match column {
        Column::JsonPretty => "#9aa5b1",
        Column::JsonCompact => "#616e7c",
        Column::Gcx1 => "#2f80ed",
        Column::GcfGeneric => "#27ae60",
        Column::GcfFewest => "#0b8a4d",
        Column::GcfCrate => "#a3d9b1",
        Column::GcfGraph => "#1e8449",
        Column::Toon => "#e67e22",
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The chart as an SVG document.
pub(crate) fn svg(groups: &[Group<'_>], tokenizer: Tokenizer) -> String {
    let bars: u32 = groups.iter().map(|g| g.summary.len() as u32).sum();
    let height = 64 + groups.len() as u32 * (GROUP_TITLE + 8) + bars * (BAR + GAP) + 28;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" \
         viewBox=\"0 0 {WIDTH} {height}\" role=\"img\" aria-labelledby=\"title desc\" \
         font-family=\"system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif\" font-size=\"12\">"
    );
    let _ = writeln!(
        out,
        "<title id=\"title\">Tokens per format ({})</title>",
        tokenizer.name()
    );
    let _ = writeln!(
        out,
        "<desc id=\"desc\">Total {} tokens of each format per group of corpus files; bars are \
         scaled to the largest in their group, labels give the tokens and the change against \
         compact JSON.</desc>",
        tokenizer.name()
    );
    let _ = writeln!(
        out,
        "<rect width=\"{WIDTH}\" height=\"{height}\" fill=\"#ffffff\"/>"
    );
    let _ = writeln!(
        out,
        "<text x=\"16\" y=\"28\" font-size=\"16\" font-weight=\"600\" fill=\"#1f2933\">Tokens \
         per format ({}), lower is better</text>",
        tokenizer.name()
    );
    let _ = writeln!(
        out,
        "<text x=\"16\" y=\"48\" fill=\"#52606d\">Bars are scaled within each group; labels: \
         total tokens and the change against compact JSON.</text>"
    );
    let mut y = 64;
    for group in groups {
        y += GROUP_TITLE;
        let _ = writeln!(
            out,
            "<text x=\"16\" y=\"{}\" font-weight=\"600\" fill=\"#1f2933\">{}</text>",
            y - 10,
            escape(&group.title)
        );
        let tokens = |s: &FormatSummary| match tokenizer {
            Tokenizer::O200kBase => s.o200k,
            _ => s.cl100k,
        };
        let max = group.summary.iter().map(tokens).max().unwrap_or(1).max(1);
        for s in group.summary {
            let t = tokens(s);
            let width = ((t as f64 / max as f64) * f64::from(BAR_AREA))
                .round()
                .max(1.0);
            let label_y = y + BAR / 2 + 4;
            let _ = writeln!(
                out,
                "<text x=\"{}\" y=\"{label_y}\" text-anchor=\"end\" fill=\"#323f4b\">{}</text>",
                LABEL_WIDTH + 8,
                escape(s.label)
            );
            let _ = writeln!(
                out,
                "<rect x=\"{}\" y=\"{y}\" width=\"{width}\" height=\"{BAR}\" rx=\"2\" fill=\"{}\"/>",
                LABEL_WIDTH + 16,
                color(s.format)
            );
            let change = if s.format == Column::JsonCompact {
                String::new()
            } else {
                format!(" ({})", percent(s.vs_compact))
            };
            let _ = writeln!(
                out,
                "<text x=\"{}\" y=\"{label_y}\" fill=\"#323f4b\">{}{}</text>",
                f64::from(LABEL_WIDTH + 16) + width + 6.0,
                thousands(t),
                escape(&change)
            );
            y += BAR + GAP;
        }
        y += 8;
    }
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(format: Column, o200k: usize, vs_compact: f64) -> FormatSummary {
        FormatSummary {
            format,
            label: format.label(),
            files: 1,
            bytes: o200k * 3,
            cl100k: o200k,
            o200k,
            vs_compact,
            vs_pretty: 0.0,
            median_vs_compact: vs_compact,
            median_vs_pretty: 0.0,
            exact: 1,
            equivalent: 0,
            failed: 0,
        }
    }

    #[test]
    fn one_labelled_bar_per_format_scaled_within_its_group() {
        let all = [
            summary(Column::JsonCompact, 1000, 0.0),
            summary(Column::GcfGeneric, 500, -0.5),
        ];
        let graphs = [summary(Column::GcfGraph, 20, -0.98)];
        let groups = [
            Group {
                title: "All <2> files".into(),
                summary: &all,
            },
            Group {
                title: "Graph payloads (1 file)".into(),
                summary: &graphs,
            },
        ];
        let svg = svg(&groups, Tokenizer::O200kBase);
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.ends_with("</svg>\n"));
        assert_eq!(svg.matches("<rect x=").count(), 3);
        // The largest bar of each group spans the whole bar area, the others their share.
        assert_eq!(svg.matches(&format!("width=\"{BAR_AREA}\"")).count(), 2);
        assert!(svg.contains(&format!("width=\"{}\"", BAR_AREA / 2)));
        assert!(svg.contains(">1,000</text>"));
        assert!(svg.contains(">500 (\u{2212}50.0 %)</text>"));
        assert!(svg.contains("All &lt;2&gt; files"));
        assert!(svg.contains("Tokens per format (o200k_base)"));
    }
}
