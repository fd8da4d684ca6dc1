//! Reading JSONL: one event per line, tolerant of unknown types and members.

use std::io::BufRead;

use serde_json::Value;

use crate::{Error, ErrorKind, Event};

/// The default longest line [`EventReader`] accepts: 64 MiB. A terminal event repeats the
/// whole output, so lines can be large, but not unbounded.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 << 20;

/// Reads one event from one line of JSON (without its line break).
///
/// ```
/// let event = agentwire_exec::from_str(r#"{"type":"response.future_event","x":1}"#)?;
/// assert_eq!(event.event_type(), "response.future_event");
/// assert_eq!(agentwire_exec::to_string(&event), r#"{"type":"response.future_event","x":1}"#);
/// # Ok::<(), agentwire_exec::Error>(())
/// ```
pub fn from_str(line: &str) -> Result<Event, Error> {
    parse_line(line.as_bytes()).map_err(|e| e.at_line(1))
}

/// Parses one line's bytes; errors carry a column but no line.
fn parse_line(bytes: &[u8]) -> Result<Event, Error> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| json_error(bytes, &e))?;
    Event::from_value(value)
}

fn json_error(bytes: &[u8], e: &serde_json::Error) -> Error {
    if let Err(utf8) = std::str::from_utf8(bytes) {
        return Error::new(ErrorKind::InvalidUtf8 {
            offset: utf8.valid_up_to(),
        })
        .at_column(char_column(bytes, utf8.valid_up_to()));
    }
    let error = Error::new(ErrorKind::InvalidJson {
        message: strip_position(e),
    });
    if e.column() > 0 {
        // serde_json counts the column in bytes, up to and including the offending one.
        error.at_column(char_column(bytes, e.column() - 1))
    } else {
        error
    }
}

/// serde_json's message without its ` at line L column C` suffix.
pub(crate) fn strip_position(e: &serde_json::Error) -> String {
    let message = e.to_string();
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message,
    }
}

/// The 1-based column, in characters, of the byte at `offset` of a line.
pub(crate) fn char_column(line: &[u8], offset: usize) -> u64 {
    let prefix = &line[..offset.min(line.len())];
    // Count the bytes that start a character: every byte but UTF-8 continuation bytes.
    let chars = prefix.iter().filter(|&&b| (b & 0xC0) != 0x80).count();
    chars as u64 + 1
}

/// Reads events from JSONL, one per line.
///
/// - Lines end with `\n` or `\r\n`; empty and all-whitespace lines are skipped.
/// - Unknown event types become [`Event::Other`] and unknown members stay in each type's
///   `extra`: neither is an error.
/// - A malformed line (not UTF-8, not JSON, not an object, no `type`, or a modelled member of the
///   wrong JSON type) is an error carrying its line number; reading can continue with the next
///   line.
/// - A line longer than the limit ([`DEFAULT_MAX_LINE_BYTES`] unless set with
///   [`max_line_bytes`](EventReader::max_line_bytes)) is an error, and is skipped without being
///   held in memory.
///
/// ```
/// use agentwire_exec::EventReader;
///
/// let jsonl = "{\"type\":\"response.output_text.delta\",\"delta\":\"Hel\"}\n\
///              not json\n\
///              {\"type\":\"response.output_text.delta\",\"delta\":\"lo\"}\n";
/// let mut reader = EventReader::new(jsonl.as_bytes());
/// assert_eq!(reader.read_event()?.unwrap().event_type(), "response.output_text.delta");
/// let err = reader.read_event().unwrap_err();
/// assert_eq!((err.code(), err.line()), ("invalid_json", Some(2)));
/// assert!(reader.read_event()?.is_some());
/// assert!(reader.read_event()?.is_none());
/// # Ok::<(), agentwire_exec::Error>(())
/// ```
#[derive(Debug)]
pub struct EventReader<R> {
    inner: R,
    line: u64,
    max_line_bytes: usize,
    buf: Vec<u8>,
}

impl<R: BufRead> EventReader<R> {
    /// A reader over `inner`.
    pub fn new(inner: R) -> Self {
        EventReader {
            inner,
            line: 0,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            buf: Vec::new(),
        }
    }

    /// Sets the longest line accepted, in bytes (without the line break).
    #[must_use]
    pub fn max_line_bytes(mut self, limit: usize) -> Self {
        self.max_line_bytes = limit;
        self
    }

    /// The 1-based number of the last line read (0 before the first).
    pub fn line(&self) -> u64 {
        self.line
    }

    /// Reads the next event; `Ok(None)` at the end of the input.
    pub fn read_event(&mut self) -> Result<Option<Event>, Error> {
        loop {
            let Some(too_long) = self.read_line()? else {
                return Ok(None);
            };
            if too_long {
                return Err(Error::new(ErrorKind::LineTooLong {
                    limit: self.max_line_bytes,
                })
                .at_line(self.line));
            }
            if self.buf.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            return parse_line(&self.buf)
                .map(Some)
                .map_err(|e| e.at_line(self.line));
        }
    }

    /// Consumes the reader, returning the underlying reader.
    pub fn into_inner(self) -> R {
        self.inner
    }

    /// Reads one line into `buf`, without its terminator. `None` at the end of the input;
    /// `Some(true)` when the line was longer than the limit (then `buf` holds only a prefix).
    fn read_line(&mut self) -> Result<Option<bool>, Error> {
        self.buf.clear();
        let mut too_long = false;
        let mut any = false;
        loop {
            let chunk = match self.inner.fill_buf() {
                Ok(chunk) => chunk,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Error::from(e).at_line(self.line + 1)),
            };
            if chunk.is_empty() {
                if !any {
                    return Ok(None);
                }
                break;
            }
            any = true;
            let (piece, used, end) = match memchr::memchr(b'\n', chunk) {
                Some(i) => (&chunk[..i], i + 1, true),
                None => (chunk, chunk.len(), false),
            };
            if !too_long {
                if self.buf.len() + piece.len() > self.max_line_bytes.saturating_add(1) {
                    too_long = true;
                    self.buf.clear();
                } else {
                    self.buf.extend_from_slice(piece);
                }
            }
            self.inner.consume(used);
            if end {
                break;
            }
        }
        self.line += 1;
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        if self.buf.len() > self.max_line_bytes {
            too_long = true;
        }
        Ok(Some(too_long))
    }
}

impl<R: BufRead> Iterator for EventReader<R> {
    type Item = Result<Event, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        self.read_event().transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Outcome = Result<(u64, String), (u64, &'static str)>;

    fn read_all(input: &str, limit: usize) -> Vec<Outcome> {
        let mut reader = EventReader::new(input.as_bytes()).max_line_bytes(limit);
        let mut out = Vec::new();
        loop {
            match reader.read_event() {
                Ok(Some(event)) => out.push(Ok((reader.line(), event.event_type().to_owned()))),
                Ok(None) => break,
                Err(e) => out.push(Err((e.line().unwrap_or(0), e.code()))),
            }
        }
        out
    }

    #[test]
    fn line_numbers_count_skipped_lines() {
        let input = "\n{\"type\":\"a\"}\r\n  \n[1]\n{\"type\":\"b\"}";
        assert_eq!(
            read_all(input, 100),
            vec![
                Ok((2, "a".to_owned())),
                Err((4, "not_an_object")),
                Ok((5, "b".to_owned())),
            ]
        );
    }

    #[test]
    fn long_lines_are_skipped_with_an_error() {
        let long = format!("{{\"type\":\"{}\"}}", "x".repeat(50));
        let input = format!("{long}\n{{\"type\":\"a\"}}\n{long}");
        assert_eq!(
            read_all(&input, 20),
            vec![
                Err((1, "line_too_long")),
                Ok((2, "a".to_owned())),
                Err((3, "line_too_long")),
            ]
        );
        // Exactly at the limit is accepted, and `\r` does not count.
        let exact = "{\"type\":\"abcdefghij\"}";
        assert_eq!(exact.len(), 21);
        assert_eq!(
            read_all(&format!("{exact}\r\n"), 21),
            vec![Ok((1, "abcdefghij".to_owned()))]
        );
    }

    #[test]
    fn small_buffers_do_not_change_the_result() {
        let input = "{\"type\":\"a\",\"x\":\"é\"}\n{\"type\":\"b\"}\n";
        let reader = std::io::BufReader::with_capacity(1, input.as_bytes());
        let types: Vec<String> = EventReader::new(reader)
            .map(|e| e.map(|e| e.event_type().to_owned()))
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(types, ["a", "b"]);
    }

    #[test]
    fn errors_locate_the_problem() {
        let err = from_str("{\"type\": 1}").unwrap_err();
        assert_eq!(err.code(), "missing_type");
        let err = from_str("{\"type\":\"error\", ").unwrap_err();
        assert_eq!(err.code(), "invalid_json");
        assert_eq!(err.line(), Some(1));
        assert!(err.column().is_some());
        let err = parse_line(b"{\"type\":\"\xff\"}").unwrap_err();
        assert_eq!(err.code(), "invalid_utf8");
        let err = from_str(
            r#"{"type":"response.output_item.added","item":{"type":"function_call","name":"f"}}"#,
        )
        .unwrap_err();
        assert_eq!(err.code(), "missing_field");
        assert_eq!(
            err.to_string(),
            "missing_field at line 1: response.output_item.added: missing field `item.call_id`"
        );
        let err = from_str(
            r#"{"type":"response.completed","response":{"output":[{"type":"message","content":[{"type":"output_text","text":3}]}]}}"#,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid_field at line 1: response.completed: field `response.output[0].content[0].text` must be a string, found a number"
        );
    }
}
