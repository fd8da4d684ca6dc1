//! Line sources for the line-oriented decoders (the graph profile's): the significant lines of
//! a payload, one at a time, from a text in memory ([`Lines`]) or from an `io::BufRead`
//! ([`ReaderLines`]), with the same lines, numbers and errors either way.
//!
//! A decoder generic over [`LineSource`] runs on [`Lines`] exactly as it did on `Lines`
//! itself (the trait's methods are `Lines`' own, inlined), and on a reader holding one line.

use std::io::BufRead;

use super::lines::LineReader;
use crate::error::Result;
use crate::lex::{tab_indentation, Line, Lines};
use crate::options::Limits;

/// The significant lines of a payload after its header: not blank, not a `# ` comment, not
/// a blank line indented with tabs (a tab before other content is `tab_indentation`).
pub(crate) trait LineSource {
    /// The next significant line; `None` at the end of input.
    fn next_line(&mut self) -> Result<Option<Line<'_>>>;
    /// The number of the last line of the input (1 for an empty one): where "end of input"
    /// errors point. Meaningful once [`LineSource::next_line`] has returned `None`.
    fn end_line(&self) -> usize;
}

impl LineSource for Lines<'_> {
    #[inline(always)]
    fn next_line(&mut self) -> Result<Option<Line<'_>>> {
        self.next()
    }

    fn end_line(&self) -> usize {
        Lines::end_line(self)
    }
}

/// [`LineSource`] over an `io::BufRead`: holds the current line only. Every line, skipped ones
/// included, is checked against the line-length limit and as UTF-8 (with its line number),
/// and every byte counts toward the input-size limit.
#[derive(Debug)]
pub(crate) struct ReaderLines<R> {
    lines: LineReader<R>,
}

impl<R: BufRead> ReaderLines<R> {
    pub(crate) fn new(reader: R, limits: &Limits) -> Self {
        ReaderLines {
            lines: LineReader::new(reader, limits),
        }
    }

    /// Reads the first line raw (the header: nothing is skipped before it), as an owned
    /// string; `None` for an empty input.
    pub(crate) fn first_line(&mut self) -> Result<Option<String>> {
        if !self.lines.advance()? {
            return Ok(None);
        }
        let line = self.lines.line()?;
        let mut text = " ".repeat(line.indent);
        text.push_str(line.text);
        Ok(Some(text))
    }

    /// Whether the current line is one decoders read (see [`LineSource`]). A line that is not
    /// is checked as UTF-8 here; one that is, by [`LineReader::line`] when it is handed out
    /// (once: the bytes are classified before they are validated).
    fn significant(&self) -> Result<bool> {
        let bytes = self.lines.bytes();
        let text = &bytes[bytes.iter().take_while(|&&b| b == b' ').count()..];
        let blank = text.is_empty() || text.starts_with(b"# ");
        let tab = text.first() == Some(&b'\t');
        if !blank && !tab {
            return Ok(true);
        }
        let line = self.lines.line()?;
        if tab && !line.text.bytes().all(|b| b == b'\t' || b == b' ') {
            return Err(tab_indentation(&line));
        }
        Ok(false)
    }
}

impl<R: BufRead> LineSource for ReaderLines<R> {
    fn next_line(&mut self) -> Result<Option<Line<'_>>> {
        loop {
            if !self.lines.advance()? {
                return Ok(None);
            }
            if self.significant()? {
                break;
            }
        }
        self.lines.line().map(Some)
    }

    fn end_line(&self) -> usize {
        self.lines.number().max(1)
    }
}

/// The header line `text` (the input's line 1, as [`ReaderLines::first_line`] gives it) as a
/// [`Line`].
pub(crate) fn header_line(text: &str) -> Line<'_> {
    let indent = text.bytes().take_while(|&b| b == b' ').count();
    Line {
        text: &text[indent..],
        indent,
        number: 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every significant line (number, indent, text), or the first error's (code, line,
    /// column).
    type Read = std::result::Result<Vec<(usize, usize, String)>, (String, u64, u64)>;

    /// [`Read`] from both sources.
    fn both(input: &str) -> [Read; 2] {
        fn collect(source: &mut dyn LineSource) -> Read {
            let mut out = Vec::new();
            loop {
                match source.next_line() {
                    Ok(Some(line)) => out.push((line.number, line.indent, line.text.to_owned())),
                    Ok(None) => {
                        out.push((source.end_line(), 0, "<end>".to_owned()));
                        return Ok(out);
                    }
                    Err(e) => {
                        return Err((
                            e.code().to_owned(),
                            e.line().unwrap_or(0),
                            e.column().unwrap_or(0),
                        ))
                    }
                }
            }
        }
        let limits = Limits {
            max_line_length: 12,
            ..Limits::DEFAULT
        };
        let mut memory = Lines::new(input, limits.max_line_length);
        let mut reader = ReaderLines::new(
            std::io::BufReader::with_capacity(3, input.as_bytes()),
            &limits,
        );
        [collect(&mut memory), collect(&mut reader)]
    }

    #[test]
    fn reader_lines_are_the_texts_lines() {
        for input in [
            "",
            "\n",
            "a\n\n# c\n  b\r\n\t \n#x\n",
            "a\nlast",
            "a\n\r\n  \r\n",
            "a\n\tb\n",
            "a\n  \tb\n",
            "a\n# a comment longer than twelve\n",
            "a\n0123456789abc\n",
            "a\r\n0123456789ab\r\n",
        ] {
            let [memory, reader] = both(input);
            assert_eq!(memory, reader, "{input:?}");
        }
    }
}
