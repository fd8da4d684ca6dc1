//! `agentwire validate`: checks a payload and prints `ok`, or the first error with its line
//! and column and the offending line with a caret under the offending text.

use std::path::PathBuf;

use crate::codec::{self, Format};
use crate::{input, output, CliError};

/// The format `validate` checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum From {
    /// Detect by header: `GCF ...` is GCF, `GCX...` is GCX1, text starting with `{`, `"` or
    /// `[` (other than a TOON array header) is JSON, anything else is TOON.
    Auto,
    /// GCF v3.1, either profile (graph payloads, deltas and `unchanged` replies included).
    Gcf,
    /// GCX1: every section and row; a layout's payload against its layout, a generic-fallback
    /// payload against its type meta.
    Gcx1,
    /// TOON (strict, the reference decoder's default).
    Toon,
    /// JSON.
    Json,
}

/// Arguments of `agentwire validate`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The payload's format.
    #[arg(long, value_enum, default_value = "auto")]
    from: From,
    /// The payload to check; standard input when omitted or `-`.
    file: Option<PathBuf>,
}

/// An error found in the payload: where (1-based line and character column), and what.
#[derive(Debug)]
struct Finding {
    position: Option<(usize, usize)>,
    message: String,
}

impl Finding {
    fn at(line: usize, column: usize, message: String) -> Self {
        Finding {
            position: (line > 0).then_some((line, column.max(1))),
            message,
        }
    }
}

pub(crate) fn run(args: &Args) -> Result<(), CliError> {
    let what = input::name(args.file.as_deref());
    let text = input::read_text(args.file.as_deref())?;
    let first_line = text.split_inclusive('\n').next().unwrap_or("");
    if args.from == From::Auto && text.is_empty() {
        return Err(CliError::Empty { what });
    }
    let format = match args.from {
        From::Auto => codec::detect(first_line.as_bytes()),
        From::Gcf => Format::Gcf,
        From::Gcx1 => Format::Gcx1,
        From::Toon => Format::Toon,
        From::Json => Format::Json,
    };
    let finding = match format {
        Format::Gcf => check_gcf(&text),
        Format::Gcx1 => check_gcx1(&text, first_line),
        Format::Toon => check_toon(&text),
        Format::Json => check_json(&text),
    };
    match finding {
        None => output::print("ok\n"),
        Some(finding) => Err(CliError::Invalid(report(&what, format, &text, &finding))),
    }
}

fn check_gcf(text: &str) -> Option<Finding> {
    let from = |e: agentwire_gcf::Error| Finding {
        position: e.line().map(|line| {
            let column = e.column().unwrap_or(1);
            (to_usize(line), to_usize(column).max(1))
        }),
        message: format!("{}: {}", e.code(), e.message()),
    };
    let result = agentwire_gcf::profile(text).and_then(|profile| match profile {
        agentwire_gcf::Profile::Graph => agentwire_gcf::decode_payload(text).map(drop),
        _ => agentwire_gcf::from_str::<serde_json::Value>(text).map(drop),
    });
    result.err().map(from)
}

fn check_gcx1(text: &str, first_line: &str) -> Option<Finding> {
    let from = |e: agentwire_gcx1::Error| {
        let (line, column) = e
            .position()
            .map_or((0, 0), |p| (p.line as usize, p.column as usize));
        Finding::at(line, column, codec::gcx1_message(&e))
    };
    // Every section, header and row, whatever the tool.
    if let Err(e) = agentwire_gcx1::decode(text) {
        return Some(from(e));
    }
    // Then the payload as what it says it is: a layout, or the generic fallback when its
    // header carries the fallback's meta.
    let fallback_meta = first_line
        .split([' ', '\n', '\r'])
        .any(|t| t.starts_with("types=") || t.starts_with("shape=") || t.starts_with("rows="));
    let result = match codec::layout_of_header(first_line) {
        Some(codec) => codec.decode_str(text).map(drop),
        None if fallback_meta => agentwire_gcx1::decode_any(text).map(drop),
        None => Ok(()),
    };
    result.err().map(from)
}

fn check_toon(text: &str) -> Option<Finding> {
    match toon_format::decode_default::<serde_json::Value>(text) {
        Ok(_) => None,
        Err(toon_format::ToonError::ParseError {
            line,
            column,
            message,
            ..
        }) => Some(Finding::at(line, column, message)),
        Err(e) => Some(Finding {
            position: None,
            message: e.to_string(),
        }),
    }
}

fn check_json(text: &str) -> Option<Finding> {
    let e = serde_json::from_str::<serde::de::IgnoredAny>(text).err()?;
    // serde_json counts columns in bytes; the report counts characters.
    let line = e.line();
    let column = text
        .split('\n')
        .nth(line.saturating_sub(1))
        .map_or(e.column(), |l| char_column(l, e.column()));
    let message = e.to_string();
    let message = match message.rfind(" at line ") {
        Some(cut) => message[..cut].to_owned(),
        None => message,
    };
    Some(Finding::at(line, column, message))
}

/// `message` without the position suffix the codecs append (` at line 3, column 7`,
/// ` (at line 3, column 7)`): the report puts the position first.
fn without_position(message: &str) -> String {
    for marker in [" (at line ", " at line "] {
        if let Some(cut) = message.rfind(marker) {
            let tail = &message[cut + marker.len()..];
            let tail = tail.strip_suffix(')').unwrap_or(tail);
            let is_position = tail.split_once(", column ").is_some_and(|(l, c)| {
                !l.is_empty()
                    && !c.is_empty()
                    && l.bytes().all(|b| b.is_ascii_digit())
                    && c.bytes().all(|b| b.is_ascii_digit())
            });
            if is_position {
                return message[..cut].to_owned();
            }
        }
    }
    message.to_owned()
}

/// A line or column number as an index (saturating: no input has that many lines).
fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// The character column of the 1-based byte column `byte_column` of `line`.
fn char_column(line: &str, byte_column: usize) -> usize {
    let mut end = byte_column.saturating_sub(1).min(line.len());
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    line[..end].chars().count() + 1
}

/// The report: `WHAT:LINE:COLUMN: not valid FORMAT: message`, then the line and a caret
/// under the offending text (from the column to the end of its token).
fn report(what: &str, format: Format, text: &str, finding: &Finding) -> String {
    let Some((line_no, column)) = finding.position else {
        return format!("{what}: not valid {}: {}", format.name(), finding.message);
    };
    let mut out = format!(
        "{what}:{line_no}:{column}: not valid {}: {}",
        format.name(),
        without_position(&finding.message)
    );
    let Some(line) = text.split('\n').nth(line_no - 1) else {
        return out;
    };
    let line = line.strip_suffix('\r').unwrap_or(line);
    let chars: Vec<char> = line.chars().collect();
    // Long lines: a window of at most 100 characters around the column.
    let start = column.saturating_sub(60).min(chars.len());
    let end = (start + 100).min(chars.len());
    let (lead, trail) = (
        if start > 0 { "..." } else { "" },
        if end < chars.len() { "..." } else { "" },
    );
    let shown: String = chars[start..end]
        .iter()
        .map(|&c| {
            if c.is_control() && c != '\t' {
                '\u{fffd}'
            } else {
                c
            }
        })
        .collect();
    let gutter = line_no.to_string();
    let pad = " ".repeat(gutter.len());
    out.push_str(&format!(
        "\n {gutter} | {lead}{shown}{trail}\n {pad} | {}",
        " ".repeat(lead.len())
    ));
    // Under each character before the column: a tab where the line has one (so that tab
    // stops line up), a space otherwise.
    let at = column - 1;
    for &c in &chars[start..at.min(end)] {
        out.push(if c == '\t' { '\t' } else { ' ' });
    }
    let token = chars[at.min(chars.len())..]
        .iter()
        .take_while(|c| !c.is_whitespace() && **c != '|')
        .count()
        .clamp(1, 40);
    out.push_str(&"^".repeat(token));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_caret_sits_under_the_offending_token() {
        let text = "GCF profile=graph\n## targets\n@0 fn pkg.Foo nope lsp\n";
        let finding = Finding::at(3, 15, "invalid_score".into());
        assert_eq!(
            report("in.gcf", Format::Gcf, text, &finding),
            "in.gcf:3:15: not valid GCF: invalid_score\n 3 | @0 fn pkg.Foo nope lsp\n   |               ^^^^"
        );
    }

    #[test]
    fn tabs_before_the_column_are_kept_so_that_the_caret_lines_up() {
        let text = "GCX1 tool=t fields=a,b\nx\ty\tz\n";
        let finding = Finding::at(2, 5, "too many cells".into());
        assert_eq!(
            report("-", Format::Gcx1, text, &finding),
            "-:2:5: not valid GCX1: too many cells\n 2 | x\ty\tz\n   |  \t \t^"
        );
    }

    #[test]
    fn columns_are_characters_and_long_lines_are_cut() {
        assert_eq!(char_column("\"é\" x", 6), 5);
        let line = format!("{}!{}", "a".repeat(150), "b".repeat(150));
        let finding = Finding::at(1, 151, "bang".into());
        let shown = report("f", Format::Json, &line, &finding);
        let lines: Vec<&str> = shown.lines().collect();
        assert!(lines[1].starts_with(" 1 | ...aaa") && lines[1].ends_with("bbb..."));
        assert_eq!(lines[2].find('^'), lines[1].find('!'));
    }

    #[test]
    fn position_suffixes_are_dropped_from_messages() {
        assert_eq!(
            without_position("bad score at line 3, column 15"),
            "bad score"
        );
        assert_eq!(
            without_position("too many (at line 2, column 5)"),
            "too many"
        );
        assert_eq!(
            without_position("at line one, column two"),
            "at line one, column two"
        );
    }

    #[test]
    fn without_a_position_the_report_is_one_line() {
        let finding = Finding {
            position: None,
            message: "empty".into(),
        };
        assert_eq!(
            report("f", Format::Toon, "", &finding),
            "f: not valid TOON: empty"
        );
    }
}
