//! Writing JSONL: one compact JSON object per line.

use std::io::Write;

use crate::{Error, Event};

/// The event as one line of compact JSON, without a line break.
///
/// `type` comes first, then the members this crate models in a fixed order, then the others.
/// Consumers must not depend on member order.
///
/// ```
/// use agentwire_exec::{Event, OutputTextDelta};
///
/// let mut delta = OutputTextDelta::new("Hi");
/// delta.item_id = Some("msg_1".to_owned());
/// assert_eq!(
///     agentwire_exec::to_string(&Event::OutputTextDelta(delta)),
///     r#"{"type":"response.output_text.delta","item_id":"msg_1","delta":"Hi"}"#
/// );
/// ```
pub fn to_string(event: &Event) -> String {
    // Serializing an event cannot fail: keys are strings and values are JSON values.
    serde_json::to_string(event).unwrap_or_default()
}

/// Writes events as JSONL, one per line, each line written whole.
///
/// ```
/// use agentwire_exec::{ErrorEvent, Event, EventWriter};
///
/// let mut writer = EventWriter::new(Vec::new());
/// writer.write_event(&Event::Error(ErrorEvent::new(None, "boom")))?;
/// assert_eq!(writer.into_inner(), b"{\"type\":\"error\",\"message\":\"boom\"}\n");
/// # Ok::<(), agentwire_exec::Error>(())
/// ```
#[derive(Debug)]
pub struct EventWriter<W: Write> {
    inner: W,
    line: Vec<u8>,
}

impl<W: Write> EventWriter<W> {
    /// A writer over `inner`. Each event is written with one `write_all` call; wrap `inner` in
    /// a `BufWriter` to batch them, or call [`flush`](EventWriter::flush) after each event to
    /// stream.
    pub fn new(inner: W) -> Self {
        EventWriter {
            inner,
            line: Vec::new(),
        }
    }

    /// Writes one event and a `\n`.
    pub fn write_event(&mut self, event: &Event) -> Result<(), Error> {
        self.line.clear();
        serde_json::to_writer(&mut self.line, event).map_err(std::io::Error::from)?;
        self.line.push(b'\n');
        self.inner.write_all(&self.line)?;
        Ok(())
    }

    /// The last line written, with its `\n`.
    pub fn last_line(&self) -> &[u8] {
        &self.line
    }

    /// Flushes the underlying writer.
    pub fn flush(&mut self) -> Result<(), Error> {
        self.inner.flush()?;
        Ok(())
    }

    /// A reference to the underlying writer.
    pub fn get_ref(&self) -> &W {
        &self.inner
    }

    /// Consumes the writer, returning the underlying writer.
    pub fn into_inner(self) -> W {
        self.inner
    }
}
