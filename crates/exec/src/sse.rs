//! Server-sent events: the framing of a streaming Responses-API body.
//!
//! The decoder follows the WHATWG event-stream interpretation: lines end with `\r\n`, `\n` or
//! `\r`; a leading byte-order mark is dropped; `:` starts a comment; `data` lines of one event
//! are joined with `\n`; `event`, `id` and `retry` are recorded; an empty line dispatches the
//! event, and an event with no data is not dispatched; an event left open at the end of the
//! stream is discarded. Three differences: a line that is not UTF-8 is an error (the standard
//! replaces bytes, which would corrupt data silently), one event may hold at most a fixed number
//! of bytes, and one comment line at most another, so memory stays bounded whatever the server
//! sends. Comments are never held in memory and do not count toward the event's size.

use std::io::Read;

use crate::{Error, ErrorKind};

/// The default largest event [`SseDecoder`] accepts: 32 MiB of field lines. The final event of
/// a response repeats the whole output, so events can be large.
pub const DEFAULT_MAX_EVENT_BYTES: usize = 32 << 20;

/// The default longest comment line [`SseDecoder`] accepts: 1 MiB. Comments (`: keep-alive`)
/// are skipped without being held, so this bounds only how long one comment may go on.
pub const DEFAULT_MAX_COMMENT_BYTES: usize = 1 << 20;

/// The byte-order mark a stream may start with.
const BOM: &[u8] = "\u{feff}".as_bytes();

/// One dispatched server-sent event.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SseEvent {
    /// The `event` field, when the event had one.
    pub event: Option<String>,
    /// The `data` lines, joined with `\n`.
    pub data: String,
    /// The last event id seen so far in the stream (the `id` field persists across events).
    pub id: Option<String>,
    /// The `retry` field, when this event had a valid one.
    pub retry: Option<u64>,
    /// The 1-based line of the event's first field.
    pub line: u64,
}

/// A push decoder: feed it the body's bytes in chunks of any size and collect events.
///
/// ```
/// use agentwire_exec::SseDecoder;
///
/// let mut decoder = SseDecoder::new();
/// let mut events = Vec::new();
/// decoder.feed(b": keep-alive\r\nevent: response.created\r\ndata: {\"a\":", &mut events)?;
/// decoder.feed(b"1}\r\n\r\ndata: x\ndata: y\n\n", &mut events)?;
/// assert_eq!(events[0].event.as_deref(), Some("response.created"));
/// assert_eq!(events[0].data, "{\"a\":1}");
/// assert_eq!(events[1].data, "x\ny");
/// assert_eq!(decoder.finish(), None);
/// # Ok::<(), agentwire_exec::Error>(())
/// ```
///
/// An error is final: the decoder rejects every later chunk with the same kind of error.
#[derive(Debug)]
pub struct SseDecoder {
    max_event_bytes: usize,
    max_comment_bytes: usize,
    line: Vec<u8>,
    /// The current line is a comment: its bytes are counted, not kept.
    in_comment: bool,
    comment_bytes: usize,
    /// The last byte of the previous chunk was `\r`: a `\n` starting this chunk belongs to it.
    after_cr: bool,
    /// Nothing but a prefix of the byte-order mark has been seen; how much of it.
    at_start: bool,
    bom_matched: usize,
    line_no: u64,
    /// Bytes of field lines of the current event so far.
    event_bytes: usize,
    event_start: Option<u64>,
    data: String,
    has_data: bool,
    event: Option<String>,
    last_id: Option<String>,
    retry: Option<u64>,
    failed: Option<ErrorKindCopy>,
}

/// Enough of a past error to repeat it.
#[derive(Debug, Clone, Copy)]
enum ErrorKindCopy {
    TooLarge,
    CommentTooLarge,
    Utf8,
}

impl Default for SseDecoder {
    fn default() -> Self {
        SseDecoder::new()
    }
}

impl SseDecoder {
    /// A decoder with the default event limit ([`DEFAULT_MAX_EVENT_BYTES`]).
    pub fn new() -> Self {
        SseDecoder {
            max_event_bytes: DEFAULT_MAX_EVENT_BYTES,
            max_comment_bytes: DEFAULT_MAX_COMMENT_BYTES,
            line: Vec::new(),
            in_comment: false,
            comment_bytes: 0,
            after_cr: false,
            at_start: true,
            bom_matched: 0,
            line_no: 0,
            event_bytes: 0,
            event_start: None,
            data: String::new(),
            has_data: false,
            event: None,
            last_id: None,
            retry: None,
            failed: None,
        }
    }

    /// Sets the largest event accepted: the bytes of its field lines (`data`, `event`, `id`,
    /// `retry` and unknown fields), line breaks and comments excluded.
    #[must_use]
    pub fn max_event_bytes(mut self, limit: usize) -> Self {
        self.max_event_bytes = limit;
        self
    }

    /// Sets the longest comment line accepted, in bytes (without its line break). Comments are
    /// skipped as they arrive, so they cost no memory whatever this limit; past it the stream
    /// is rejected (`comment_too_large`). Default [`DEFAULT_MAX_COMMENT_BYTES`].
    #[must_use]
    pub fn max_comment_bytes(mut self, limit: usize) -> Self {
        self.max_comment_bytes = limit;
        self
    }

    /// Decodes a chunk, appending the events it completes to `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), Error> {
        if let Some(failed) = self.failed {
            return Err(self.repeat(failed));
        }
        let mut rest = chunk;
        while self.at_start && !rest.is_empty() {
            if rest[0] == BOM[self.bom_matched] {
                self.bom_matched += 1;
                rest = &rest[1..];
                if self.bom_matched == BOM.len() {
                    self.at_start = false;
                }
            } else {
                // Not a byte-order mark after all: the bytes seen belong to the first line.
                self.at_start = false;
                let seen = self.bom_matched;
                self.push_bytes(&BOM[..seen])?;
            }
        }
        if self.after_cr {
            self.after_cr = false;
            if let Some(tail) = rest.strip_prefix(b"\n") {
                rest = tail;
            }
        }
        while !rest.is_empty() {
            match memchr::memchr2(b'\n', b'\r', rest) {
                Some(i) => {
                    self.push_bytes(&rest[..i])?;
                    let cr = rest[i] == b'\r';
                    rest = &rest[i + 1..];
                    if cr {
                        match rest.first() {
                            Some(b'\n') => rest = &rest[1..],
                            Some(_) => {}
                            None => self.after_cr = true,
                        }
                    }
                    self.end_line(out)?;
                }
                None => {
                    self.push_bytes(rest)?;
                    rest = &[];
                }
            }
        }
        Ok(())
    }

    /// Ends the stream. Returns the first line of an event that was still open (some field
    /// line seen but no empty line after it): per the standard it is discarded, and a caller
    /// can report the stream as cut.
    pub fn finish(&mut self) -> Option<u64> {
        if self.at_start && self.bom_matched > 0 && self.failed.is_none() {
            // A stream of one or two bytes of a byte-order mark: an unfinished line.
            self.line.extend_from_slice(&BOM[..self.bom_matched]);
        }
        self.in_comment = false;
        self.comment_bytes = 0;
        if !self.line.is_empty() && self.failed.is_none() {
            // A last line without a line break still belongs to the open event.
            self.event_start.get_or_insert(self.line_no + 1);
        }
        self.line.clear();
        let open = self.event_start.take();
        self.reset_event();
        open
    }

    fn repeat(&self, failed: ErrorKindCopy) -> Error {
        match failed {
            ErrorKindCopy::TooLarge => Error::new(ErrorKind::EventTooLarge {
                limit: self.max_event_bytes,
            }),
            ErrorKindCopy::CommentTooLarge => Error::new(ErrorKind::CommentTooLarge {
                limit: self.max_comment_bytes,
            }),
            ErrorKindCopy::Utf8 => Error::new(ErrorKind::InvalidUtf8 { offset: 0 }),
        }
        .at_line(self.line_no + 1)
    }

    fn push_bytes(&mut self, bytes: &[u8]) -> Result<(), Error> {
        if bytes.is_empty() {
            return Ok(());
        }
        if self.line.is_empty() && !self.in_comment && bytes[0] == b':' {
            self.in_comment = true;
        }
        if self.in_comment {
            self.comment_bytes = self.comment_bytes.saturating_add(bytes.len());
            if self.comment_bytes > self.max_comment_bytes {
                self.failed = Some(ErrorKindCopy::CommentTooLarge);
                return Err(Error::new(ErrorKind::CommentTooLarge {
                    limit: self.max_comment_bytes,
                })
                .at_line(self.line_no + 1));
            }
            return Ok(());
        }
        if self.event_bytes + self.line.len() + bytes.len() > self.max_event_bytes {
            self.failed = Some(ErrorKindCopy::TooLarge);
            self.line = Vec::new();
            self.data = String::new();
            return Err(Error::new(ErrorKind::EventTooLarge {
                limit: self.max_event_bytes,
            })
            .at_line(self.event_start.unwrap_or(self.line_no + 1)));
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    fn end_line(&mut self, out: &mut Vec<SseEvent>) -> Result<(), Error> {
        self.line_no += 1;
        // A line break ends any byte-order mark prefix: what was seen is the line.
        if self.at_start {
            self.at_start = false;
            let seen = self.bom_matched;
            self.push_bytes(&BOM[..seen])?;
        }
        if self.in_comment {
            self.in_comment = false;
            self.comment_bytes = 0;
            return Ok(());
        }
        let mut line = std::mem::take(&mut self.line);
        let result = self.process_line(&line, out);
        line.clear();
        self.line = line;
        result
    }

    fn process_line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) -> Result<(), Error> {
        if line.is_empty() {
            self.dispatch(out);
            return Ok(());
        }
        self.event_bytes += line.len();
        self.event_start.get_or_insert(self.line_no);
        let text = std::str::from_utf8(line).map_err(|e| {
            self.failed = Some(ErrorKindCopy::Utf8);
            Error::new(ErrorKind::InvalidUtf8 {
                offset: e.valid_up_to(),
            })
            .at_line(self.line_no)
            .at_column(crate::read::char_column(line, e.valid_up_to()))
        })?;
        let (field, value) = match text.find(':') {
            Some(i) => {
                let value = &text[i + 1..];
                (&text[..i], value.strip_prefix(' ').unwrap_or(value))
            }
            None => (text, ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = Some(value.to_owned()),
            "id" if !value.contains('\0') => self.last_id = Some(value.to_owned()),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                self.retry = value.parse().ok();
            }
            _ => {}
        }
        Ok(())
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        if self.has_data {
            out.push(SseEvent {
                event: self.event.take(),
                data: std::mem::take(&mut self.data),
                id: self.last_id.clone(),
                retry: self.retry.take(),
                line: self.event_start.unwrap_or(self.line_no),
            });
        }
        self.reset_event();
    }

    fn reset_event(&mut self) {
        self.event_bytes = 0;
        self.event_start = None;
        self.data.clear();
        self.has_data = false;
        self.event = None;
        self.retry = None;
    }
}

/// A pull reader of server-sent events over any `io::Read` (an HTTP response body).
///
/// ```
/// use agentwire_exec::SseReader;
///
/// let body = "event: response.created\ndata: {}\n\ndata: [cut";
/// let mut reader = SseReader::new(body.as_bytes());
/// assert_eq!(reader.next_event()?.unwrap().data, "{}");
/// assert!(reader.next_event()?.is_none());
/// assert_eq!(reader.open_event_at_end(), Some(4));
/// # Ok::<(), agentwire_exec::Error>(())
/// ```
#[derive(Debug)]
pub struct SseReader<R> {
    inner: R,
    decoder: SseDecoder,
    pending: std::collections::VecDeque<SseEvent>,
    batch: Vec<SseEvent>,
    buf: Box<[u8]>,
    eof: bool,
    open_at_end: Option<u64>,
    /// An error met in a chunk, returned after the events decoded before it.
    error: Option<Error>,
}

impl<R: Read> SseReader<R> {
    /// A reader over `inner` with the default event limit.
    pub fn new(inner: R) -> Self {
        SseReader::with_decoder(inner, SseDecoder::new())
    }

    /// A reader over `inner` using `decoder` (for its limit).
    pub fn with_decoder(inner: R, decoder: SseDecoder) -> Self {
        SseReader {
            inner,
            decoder,
            pending: std::collections::VecDeque::new(),
            batch: Vec::new(),
            buf: vec![0; 16 * 1024].into_boxed_slice(),
            eof: false,
            open_at_end: None,
            error: None,
        }
    }

    /// The next event; `Ok(None)` at the end of the body. After an error (an event over the
    /// limit, bytes that are not UTF-8, a read error) the reader ends: the events decoded
    /// before the error come first, then the error, then `Ok(None)`.
    pub fn next_event(&mut self) -> Result<Option<SseEvent>, Error> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Ok(Some(event));
            }
            if let Some(error) = self.error.take() {
                // The decoder's errors are final: nothing follows.
                self.eof = true;
                return Err(error);
            }
            if self.eof {
                return Ok(None);
            }
            let n = match self.inner.read(&mut self.buf) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            };
            if n == 0 {
                self.eof = true;
                self.open_at_end = self.decoder.finish();
                continue;
            }
            let fed = self.decoder.feed(&self.buf[..n], &mut self.batch);
            self.pending.extend(self.batch.drain(..));
            if let Err(error) = fed {
                self.error = Some(error);
            }
        }
    }

    /// After the end of the body: the first line of an event left open by a body that stopped
    /// in the middle of it.
    pub fn open_event_at_end(&self) -> Option<u64> {
        self.open_at_end
    }

    /// Consumes the reader, returning the underlying reader.
    pub fn into_inner(self) -> R {
        self.inner
    }
}

impl<R: Read> Iterator for SseReader<R> {
    type Item = Result<SseEvent, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_event().transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_in_chunks(
        input: &[u8],
        chunk: usize,
        limit: usize,
    ) -> (Vec<SseEvent>, Option<String>) {
        let mut decoder = SseDecoder::new().max_event_bytes(limit);
        let mut out = Vec::new();
        for piece in input.chunks(chunk.max(1)) {
            if let Err(e) = decoder.feed(piece, &mut out) {
                return (out, Some(format!("{}@{:?}", e.code(), e.line())));
            }
        }
        (out, decoder.finish().map(|l| format!("open@{l}")))
    }

    #[test]
    fn chunking_does_not_change_events() {
        let input = "\u{feff}: hi\r\nevent: a\r\ndata: 1\r\ndata:2\r\rid: 7\nretry: 10\n\ndata\n\nevent: e\n\ndata: é\r\n\r\n";
        let (whole, end) = decode_in_chunks(input.as_bytes(), usize::MAX, 1000);
        assert_eq!(end, None);
        assert_eq!(whole.len(), 3);
        assert_eq!(whole[0].event.as_deref(), Some("a"));
        assert_eq!(whole[0].data, "1\n2");
        // The event starts at its first field line: the comment before it is not part of it.
        assert_eq!(whole[0].line, 2);
        assert_eq!(whole[1].data, "");
        assert_eq!(whole[1].id.as_deref(), Some("7"));
        assert_eq!(whole[1].retry, None);
        // `\r` alone ended the `data:2` line and the empty line after it dispatched event 0.
        assert_eq!(whole[2].data, "é");
        for chunk in 1..8 {
            assert_eq!(decode_in_chunks(input.as_bytes(), chunk, 1000).0, whole);
        }
    }

    #[test]
    fn limits_and_truncation() {
        let big = format!("data: {}\n\n", "x".repeat(100));
        let (events, end) = decode_in_chunks(big.as_bytes(), 7, 50);
        assert!(events.is_empty());
        assert_eq!(end.as_deref(), Some("event_too_large@Some(1)"));
        let (events, end) = decode_in_chunks(b"data: a\n\ndata: b", 3, 50);
        assert_eq!(events.len(), 1);
        assert_eq!(end.as_deref(), Some("open@3"));
        let (_, end) = decode_in_chunks(b"data: \xff\n\n", 100, 50);
        assert_eq!(end.as_deref(), Some("invalid_utf8@Some(1)"));
    }

    #[test]
    fn comments_are_bounded_apart_from_events() {
        // Comments before and inside an event do not count toward its size...
        let body = format!(
            ": {}\ndata: {}\n: {}\n\n",
            "c".repeat(200),
            "x".repeat(40),
            "c".repeat(200)
        );
        let (events, end) = decode_in_chunks(body.as_bytes(), 7, 50);
        assert_eq!(end, None);
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].data, "x".repeat(40));
        assert_eq!(events[0].line, 2);
        // ...nor does a flood of them cost memory or open an event.
        let mut decoder = SseDecoder::new().max_event_bytes(10).max_comment_bytes(10);
        let mut out = Vec::new();
        for _ in 0..10_000 {
            decoder.feed(b": ping\r\n", &mut out).unwrap();
        }
        assert_eq!(decoder.finish(), None);
        assert!(out.is_empty());
        // One comment line over its own limit is an error, whatever the chunking.
        let long = format!("data: a\n\n:{}\n", "c".repeat(30));
        for chunk in [1, 3, 100] {
            let mut decoder = SseDecoder::new().max_comment_bytes(20);
            let mut out = Vec::new();
            let error = long
                .as_bytes()
                .chunks(chunk)
                .find_map(|piece| decoder.feed(piece, &mut out).err())
                .unwrap();
            assert_eq!((error.code(), error.line()), ("comment_too_large", Some(3)));
            assert_eq!(out.len(), 1);
        }
    }

    #[test]
    fn a_byte_order_mark_is_dropped_across_chunks() {
        let body = "\u{feff}: hi\ndata: a\n\n";
        for chunk in 1..5 {
            let (events, end) = decode_in_chunks(body.as_bytes(), chunk, 100);
            assert_eq!(end, None);
            assert_eq!(events.len(), 1, "{chunk}");
            assert_eq!((events[0].data.as_str(), events[0].line), ("a", 2));
        }
        // Half a mark is not one: the line is not UTF-8.
        let (_, end) = decode_in_chunks(b"\xef\xbbdata: a\n\n", 1, 100);
        assert_eq!(end.as_deref(), Some("invalid_utf8@Some(1)"));
    }

    #[test]
    fn the_reader_returns_events_before_an_error() {
        let body = format!(
            "data: a\n\ndata: b\n\ndata: {}\n\ndata: c\n\n",
            "x".repeat(100)
        );
        let mut reader =
            SseReader::with_decoder(body.as_bytes(), SseDecoder::new().max_event_bytes(50));
        assert_eq!(reader.next_event().unwrap().unwrap().data, "a");
        assert_eq!(reader.next_event().unwrap().unwrap().data, "b");
        assert_eq!(reader.next_event().unwrap_err().code(), "event_too_large");
        assert!(reader.next_event().unwrap().is_none());
    }

    #[test]
    fn the_error_is_final() {
        let mut decoder = SseDecoder::new().max_event_bytes(4);
        let mut out = Vec::new();
        assert!(decoder.feed(b"data: 12345\n\n", &mut out).is_err());
        assert!(decoder.feed(b"data: 1\n\n", &mut out).is_err());
        assert!(out.is_empty());
    }
}
