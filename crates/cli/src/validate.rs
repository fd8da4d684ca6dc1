//! `agentwire validate`: checks a payload and prints `ok`, or the first error with its line
//! and column and the offending line with a caret under the offending text.

use std::io::{BufRead, Read};
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
    /// GCX1: exactly what `decode` accepts (sections, rows, type letters and counts, how the
    /// sections fit together), read one line at a time.
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
    #[command(flatten)]
    limits: crate::stream::LimitArgs,
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
    let (reader, what) = input::open(args.file.as_deref())?;
    let (first_line, reader) = codec::peek_first_line(reader).map_err(|e| read_error(args, e))?;
    if args.from == From::Auto && first_line.is_empty() {
        return Err(CliError::Empty { what });
    }
    let format = match args.from {
        From::Auto => codec::detect(&first_line),
        From::Gcf => Format::Gcf,
        From::Gcx1 => Format::Gcx1,
        From::Toon => Format::Toon,
        From::Json => Format::Json,
    };
    if format == Format::Gcx1 {
        // The decoder itself, streaming: memory stays bounded by the longest line.
        return match check_gcx1(reader, args.limits.gcx1()) {
            None => output::print("ok\n"),
            Some((finding, line)) => Err(CliError::Invalid(report_line(
                &what,
                format,
                line.as_deref(),
                &finding,
            ))),
        };
    }
    let graph = format == Format::Gcf && codec::is_graph(&first_line);
    if format == Format::Gcf {
        // The decoder itself: the generic one without building the value; the graph one
        // (full graphs, deltas and `unchanged` replies) parsing each line as it arrives, in
        // the memory of the line and the graph.
        let opts = args.limits.gcf(agentwire_gcf::Spec::LATEST);
        let mut tap = LineTap::new(reader);
        let result = if graph {
            opts.decode_payload_reader(&mut tap).map(drop)
        } else {
            opts.from_reader::<_, serde::de::IgnoredAny>(&mut tap)
                .map(drop)
        };
        return match result {
            Ok(()) => output::print("ok\n"),
            Err(e) => {
                let finding = gcf_finding(&e);
                let line = tap.line(e.line().unwrap_or(0));
                Err(CliError::Invalid(report_line(
                    &what,
                    format,
                    line.as_deref(),
                    &finding,
                )))
            }
        };
    }
    let mut bytes = Vec::new();
    let mut reader = reader;
    reader
        .read_to_end(&mut bytes)
        .map_err(|e| read_error(args, e))?;
    let text = String::from_utf8(bytes).map_err(|e| CliError::NotUtf8 {
        what: what.clone(),
        offset: e.utf8_error().valid_up_to(),
    })?;
    let finding = match format {
        Format::Toon => check_toon(&text),
        Format::Json => check_json(&text, &what),
        Format::Gcf | Format::Gcx1 => None,
    };
    match finding {
        None => output::print("ok\n"),
        Some(finding) => Err(CliError::Invalid(report(&what, format, &text, &finding))),
    }
}

fn gcf_finding(e: &agentwire_gcf::Error) -> Finding {
    Finding {
        position: e.line().map(|line| {
            let column = e.column().unwrap_or(1);
            (to_usize(line), to_usize(column).max(1))
        }),
        message: format!("{}: {}", e.code(), e.message()),
    }
}

/// Runs the GCX1 decoder over the payload without building its value: the finding, and the
/// offending line as far as it was read.
fn check_gcx1<R: BufRead>(
    reader: R,
    limits: agentwire_gcx1::Limits,
) -> Option<(Finding, Option<String>)> {
    let mut tap = LineTap::new(reader);
    let e = agentwire_gcx1::Options::new()
        .limits(limits)
        .validate(&mut tap)
        .err()?;
    let (line, column) = (e.line().unwrap_or(0), e.column().unwrap_or(0));
    let finding = Finding::at(line as usize, column as usize, e.message());
    let text = tap.line(line);
    Some((finding, text))
}

/// A reader that remembers the line being read and the lines before it (the first
/// [`Recent::KEEP`] bytes of each, the last line and as many more as fit in
/// [`Recent::RECENT`] bytes), so that a report can show the offending line of a stream even
/// when the decoder reads ahead of it through a buffer of its own.
struct LineTap<R> {
    inner: R,
    recent: Recent,
}

/// The lines a [`LineTap`] remembers.
#[derive(Default)]
struct Recent {
    /// The 1-based number of the line being read.
    number: u64,
    current: Vec<u8>,
    /// The lines before it, the latest last: `lines[i]` is line `number - len + i`.
    lines: std::collections::VecDeque<Vec<u8>>,
    /// The bytes held in `lines`.
    bytes: usize,
}

impl<R: BufRead> LineTap<R> {
    fn new(inner: R) -> Self {
        LineTap {
            inner,
            recent: Recent {
                number: 1,
                ..Recent::default()
            },
        }
    }

    /// Line `number`'s text, if it is one of those kept.
    fn line(&self, number: u64) -> Option<String> {
        let recent = &self.recent;
        let bytes = if number == recent.number {
            &recent.current
        } else {
            let back = usize::try_from(recent.number.checked_sub(number)?).ok()?;
            recent.lines.get(recent.lines.len().checked_sub(back)?)?
        };
        Some(String::from_utf8_lossy(bytes).into_owned())
    }
}

impl Recent {
    const KEEP: usize = 64 * 1024;
    const RECENT: usize = 64 * 1024;

    fn record(&mut self, mut bytes: &[u8]) {
        while let Some(at) = memchr_newline(bytes) {
            self.keep(&bytes[..at]);
            // The line ends: kept with the recent ones; the oldest past the budget leave, and
            // the last to leave lends its buffer to the next line.
            let mut spare = Vec::new();
            self.bytes += self.current.len();
            while !self.lines.is_empty() && self.bytes > Self::RECENT {
                spare = self.lines.pop_front().unwrap_or_default();
                self.bytes -= spare.len();
            }
            spare.clear();
            self.lines
                .push_back(std::mem::replace(&mut self.current, spare));
            self.number += 1;
            bytes = &bytes[at + 1..];
        }
        self.keep(bytes);
    }

    fn keep(&mut self, bytes: &[u8]) {
        let room = Self::KEEP.saturating_sub(self.current.len());
        self.current
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
    }
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

impl<R: BufRead> Read for LineTap<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let available = self.inner.fill_buf()?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.recent.record(&available[..n]);
        self.inner.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for LineTap<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amount: usize) {
        if let Ok(available) = self.inner.fill_buf() {
            self.recent
                .record(&available[..amount.min(available.len())]);
        }
        self.inner.consume(amount);
    }
}

fn read_error(args: &Args, source: std::io::Error) -> CliError {
    match &args.file {
        Some(path) if path.as_os_str() != "-" => CliError::Read {
            path: path.clone(),
            source,
        },
        _ => CliError::Stdin(source),
    }
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

/// JSON as `encode` reads it (the same reader: exact numbers, the same refusals).
fn check_json(text: &str, what: &str) -> Option<Finding> {
    let e = match codec::read_json(text.as_bytes(), what) {
        Ok(_) => return None,
        Err(CliError::InvalidJson { source, .. }) => source,
        Err(other) => {
            return Some(Finding {
                position: None,
                message: other.to_string(),
            })
        }
    };
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
    let line = finding
        .position
        .and_then(|(line_no, _)| text.split('\n').nth(line_no - 1));
    report_line(what, format, line, finding)
}

/// [`report`] given the offending line itself, when known.
fn report_line(what: &str, format: Format, line: Option<&str>, finding: &Finding) -> String {
    let Some((line_no, column)) = finding.position else {
        return format!("{what}: not valid {}: {}", format.name(), finding.message);
    };
    let mut out = format!(
        "{what}:{line_no}:{column}: not valid {}: {}",
        format.name(),
        without_position(&finding.message)
    );
    let Some(line) = line else {
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
