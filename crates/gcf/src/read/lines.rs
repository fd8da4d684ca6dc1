//! The streaming line source: one line at a time from an `io::BufRead`, with the line-length
//! limit enforced before the line is buffered past it, the input-size limit on every byte,
//! and UTF-8 checked per line (with the line's number).

use std::io::{self, BufRead};

use crate::error::{Error, ErrorKind, Limit, Position, Result};
use crate::lex::{self, Line};
use crate::options::Limits;

/// Reads lines (LF or CRLF terminated, the last possibly unterminated) from a `BufRead`,
/// holding only the current line.
#[derive(Debug)]
pub(crate) struct LineReader<R> {
    inner: R,
    /// The current line's bytes, without its terminator (and one trailing `\r`).
    buf: Vec<u8>,
    /// The current line's number (0 before the first).
    number: usize,
    /// Bytes read from `inner` so far.
    read: usize,
    max_line_length: usize,
    max_input_size: Option<usize>,
}

impl<R: BufRead> LineReader<R> {
    pub(crate) fn new(inner: R, limits: &Limits) -> Self {
        LineReader {
            inner,
            buf: Vec::new(),
            number: 0,
            read: 0,
            max_line_length: limits.max_line_length,
            max_input_size: limits.max_input_size,
        }
    }

    /// The number of the current line (0 before the first one is read).
    pub(crate) fn number(&self) -> usize {
        self.number
    }

    /// Reads the next line; `false` at the end of input. A line longer than the limit is an
    /// error as soon as its limit is passed: at most `max_line_length + 1` bytes are kept.
    pub(crate) fn advance(&mut self) -> Result<bool> {
        self.buf.clear();
        let mut any = false;
        loop {
            let available = match self.inner.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Error::io(e)),
            };
            if available.is_empty() {
                if !any {
                    return Ok(false);
                }
                break;
            }
            any = true;
            let (take, done) = match memchr::memchr(b'\n', available) {
                Some(i) => (i + 1, true),
                None => (available.len(), false),
            };
            let content = if done { take - 1 } else { take };
            // One byte over the limit is allowed in flight: it may be the `\r` of a CRLF.
            if self.buf.len().saturating_add(content) > self.max_line_length.saturating_add(1) {
                self.number += 1;
                return Err(self.too_long());
            }
            self.buf.extend_from_slice(&available[..content]);
            self.inner.consume(take);
            self.read = self.read.saturating_add(take);
            if let Some(max) = self.max_input_size {
                if self.read > max {
                    return Err(Error::new(
                        ErrorKind::LimitExceeded(Limit::InputSize),
                        format!("the input exceeds the limit of {max} bytes"),
                    ));
                }
            }
            if done {
                break;
            }
        }
        self.number += 1;
        let indent = self.buf.iter().take_while(|&&b| b == b' ').count();
        if self.buf.len() > indent && self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        if self.buf.len() > self.max_line_length {
            return Err(self.too_long());
        }
        Ok(true)
    }

    #[cold]
    fn too_long(&self) -> Error {
        Error::at_line(
            ErrorKind::LimitExceeded(Limit::LineLength),
            self.number,
            1,
            format!(
                "line {} exceeds the limit of {} bytes",
                self.number, self.max_line_length
            ),
        )
    }

    /// The current line, validated as UTF-8.
    pub(crate) fn line(&self) -> Result<Line<'_>> {
        let text = lex::utf8(&self.buf).map_err(|e| {
            let column = e.column().unwrap_or(1);
            e.with_position(Position {
                line: self.number as u64,
                column,
            })
        })?;
        let indent = text.bytes().take_while(|&b| b == b' ').count();
        Ok(Line {
            text: &text[indent..],
            indent,
            number: self.number,
        })
    }

    /// The current line's bytes, as read (without the terminator).
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.buf
    }
}

/// Appends `line` (as [`LineReader`] read it, its line end taken off) and a line end to
/// `text`, so that a decoder reading `text` gets `line` back: a line that still ends with
/// `\r` (its input ended `\r\r\n`) gets `\r\n`, since readers take one `\r` before `\n` as
/// part of the line end.
pub(crate) fn push_line(text: &mut String, line: &str) {
    text.push_str(line);
    if line.ends_with('\r') {
        text.push('\r');
    }
    text.push('\n');
}

/// Whether a line may matter to a decoder: not blank (spaces and tabs alone), not a `# `
/// comment. (A line whose content starts with a tab is kept: decoders report it as
/// `tab_indentation`.)
pub(crate) fn is_significant(line: &Line<'_>) -> bool {
    !(line.text.starts_with("# ") || line.text.bytes().all(|b| b == b'\t' || b == b' '))
}

/// Where the lines of a text built from a stream came from: the text leaves out runs of blank
/// and comment lines, and this maps its line numbers back to the input's.
#[derive(Debug, Default)]
pub(crate) struct LineMap {
    /// `(first line of the text, lines left out before it)`, ascending.
    runs: Vec<(usize, usize)>,
}

impl LineMap {
    /// Records that `dropped` lines in all were left out before line `at` of the text.
    pub(crate) fn skip_before(&mut self, at: usize, dropped: usize) {
        match self.runs.last_mut() {
            Some(last) if last.0 == at => last.1 = dropped,
            _ => self.runs.push((at, dropped)),
        }
    }

    /// The input's line for line `line` of the text.
    pub(crate) fn input_line(&self, line: u64) -> u64 {
        let i = self.runs.partition_point(|&(at, _)| at as u64 <= line);
        match i.checked_sub(1) {
            Some(i) => line + self.runs[i].1 as u64,
            None => line,
        }
    }

    /// `error` with its line moved back to the input's numbering.
    pub(crate) fn fix(&self, error: Error) -> Error {
        match (error.line(), error.column()) {
            (Some(line), Some(column)) => error.with_position(Position {
                line: self.input_line(line),
                column,
            }),
            (Some(line), None) => {
                let line = self.input_line(line);
                error.with_line(line)
            }
            _ => error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], max: usize) -> Result<Vec<(usize, String)>> {
        let limits = Limits {
            max_line_length: max,
            ..Limits::DEFAULT
        };
        let mut r = LineReader::new(io::BufReader::with_capacity(4, input), &limits);
        let mut out = Vec::new();
        while r.advance()? {
            let line = r.line()?;
            out.push((
                line.number,
                format!("{}{}", " ".repeat(line.indent), line.text),
            ));
        }
        Ok(out)
    }

    #[test]
    fn reads_lf_crlf_and_an_unterminated_last_line() {
        let got = lines(b"a\r\n  b\n\nlast", 10).unwrap();
        assert_eq!(
            got,
            [
                (1, "a".into()),
                (2, "  b".into()),
                (3, String::new()),
                (4, "last".into())
            ]
        );
    }

    #[test]
    fn a_long_line_fails_at_its_number() {
        let e = lines(b"ok\n0123456789A\n", 10).unwrap_err();
        assert_eq!(e.code(), "limit_exceeded");
        assert_eq!((e.line(), e.column()), (Some(2), Some(1)));
        // Exactly the limit, with CRLF, is fine.
        assert!(lines(b"0123456789\r\n", 10).is_ok());
        assert!(lines(b"0123456789", 10).is_ok());
    }

    #[test]
    fn bad_utf8_has_its_line() {
        let e = lines(b"ok\nab\xff\n", 10).unwrap_err();
        assert_eq!(e.code(), "invalid_utf8");
        assert_eq!((e.line(), e.column()), (Some(2), Some(3)));
    }

    /// Reads a whole payload from `reader` line by line into a text without its blank and comment
    /// lines (which decoders never read; a run of them costs one map entry): memory is bounded by
    /// the line limit and the payload's content, never by its comments or a line past the limit.
    fn read_content<R: BufRead>(reader: R, limits: &Limits) -> Result<(String, LineMap)> {
        let mut lines = LineReader::new(reader, limits);
        let mut text = String::new();
        let mut map = LineMap::default();
        let mut kept = 0usize;
        while lines.advance()? {
            let line = lines.line()?;
            // The header line is always kept: the decoders read it raw.
            if kept > 0 && !is_significant(&line) {
                map.skip_before(kept + 1, lines.number() - kept);
                continue;
            }
            kept += 1;
            // Safe to append: `line()` validated the bytes as UTF-8.
            push_line(
                &mut text,
                std::str::from_utf8(lines.bytes()).unwrap_or_default(),
            );
        }
        Ok((text, map))
    }

    #[test]
    fn content_leaves_out_comments_and_maps_lines_back() {
        let (text, map) = read_content(
            &b"GCF profile=generic\n# one\n\n# two\na=1\n# three\nb=2\n"[..],
            &Limits::DEFAULT,
        )
        .unwrap();
        assert_eq!(text, "GCF profile=generic\na=1\nb=2\n");
        assert_eq!(map.input_line(1), 1);
        assert_eq!(map.input_line(2), 5);
        assert_eq!(map.input_line(3), 7);
    }
}
