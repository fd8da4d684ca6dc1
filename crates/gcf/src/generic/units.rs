//! `from_reader` into a `serde_json::Value`: the payload read a unit at a time, never whole.
//!
//! A unit is a run of the root's lines that the in-memory decoder ([`de::decode_unit`]) reads
//! on its own exactly as it reads them inside the whole payload:
//!
//! - a root object is cut before its `## key ...` section lines (at indentation 0): every
//!   value before such a line ends there (an object's members are indented, a table's rows
//!   and a list's items stop at a `##` line). A unit gathers lines up to
//!   [`DecoderOptions::stream_unit_size`] bytes (64 KiB) and is decoded at the next such
//!   line; a table member starts a unit of its own. The members decoded so far go with each
//!   unit, which checks a repeated key and the element limit against them, and the deferred
//!   `[?]` sections found so far go with the last, which checks them against the trailer;
//! - a table without a layout (a root table, or a root member that is one) is cut between its
//!   rows into pieces of about that size: each piece is the table's header line and the next
//!   rows, read as the continuation of the rows before it ([`Resume`]: `@N` row ids, the
//!   count and the element limit go on from there), and its rows join the ones read before.
//!   A table stops being cut once a row has a `{` in its lines (an inline or shared schema
//!   later rows may use) or a `.field` line at the table's level;
//! - anything else is one unit: a root scalar, a root list of `@N` items, a table with a
//!   layout (keyed, grouped, with constants or paths), and a section with everything nested
//!   in it.
//!
//! So memory holds the value being built, one unit's text (about 64 KiB, or the largest
//! section, list or uncut table), and the current line (bounded by the line limit). Blank and
//! comment lines are never kept (a run of them costs one entry of a [`LineMap`]).
//!
//! Errors are the in-memory decoder's, at the input's positions (the oracle
//! `agentwire_testkit::gcf::check_from_reader` compares the two), except that malformed UTF-8
//! and the input-size limit are found where they are read, not before anything else. A line
//! past the line limit is read no further than its limit: the unit before it is decoded with
//! a stand-in line past its longest line in its place, so that an earlier error in that unit
//! is the one reported, as the in-memory decoder reports it.

use std::io::BufRead;

use serde_json::Value;

use super::de::{self, Carry, Resume};
use crate::error::{Error, ErrorKind, Limit, Position, Result};
use crate::options::DecoderOptions;
use crate::read::{is_significant, LineMap, LineReader};

/// Decodes the generic payload `reader` holds into a `serde_json::Value`, a unit at a time.
pub(crate) fn value_from_reader<R: BufRead>(reader: R, opts: &DecoderOptions) -> Result<Value> {
    let mut units = Units {
        lines: LineReader::new(reader, &opts.limits),
        opts: opts.clone(),
        header: String::new(),
        text: String::new(),
        map: LineMap::default(),
        kept: 0,
        dropped: 0,
        held: false,
        carry: Carry::default(),
        table: None,
        done: false,
        longest: 0,
    };
    units.run()
}

/// A table read in pieces.
#[derive(Debug)]
struct Table {
    /// The member the table is, `None` for the root table.
    key: Option<String>,
    /// The table's header line (with its indentation) and its line in the input.
    header: String,
    number: usize,
    /// The declared row count (`None` for `[?]`).
    count: Option<u64>,
    /// The row lines seen so far.
    rows: u64,
    /// Whether the table may still be cut before its next row.
    cuttable: bool,
    /// The rows of the pieces decoded so far.
    before: Vec<Value>,
}

struct Units<R> {
    lines: LineReader<R>,
    opts: DecoderOptions,
    /// The payload's header line, with its newline.
    header: String,
    /// The current unit: the header line, then the unit's lines.
    text: String,
    /// The input's line for each line of `text`.
    map: LineMap,
    /// The lines in `text`, and the input lines left out before the last of them.
    kept: usize,
    dropped: usize,
    /// Whether the current line of `lines` is a significant line not yet taken.
    held: bool,
    carry: Carry,
    /// The table the current unit holds a piece of.
    table: Option<Table>,
    /// Whether nothing more is read (the rest of the input cannot change the outcome).
    done: bool,
    /// The longest line in the current unit (with its indentation).
    longest: usize,
}

impl<R: BufRead> Units<R> {
    fn run(&mut self) -> Result<Value> {
        if !self.lines.advance()? {
            // The in-memory decoder's error for an empty payload.
            return de::decode_value("", &self.opts);
        }
        self.lines.line()?;
        self.header = String::from_utf8_lossy(self.lines.bytes()).into_owned();
        self.header.push('\n');
        self.reset();
        if !self.peek()? {
            return self.end();
        }
        let (indent, first) = self.current();
        let (scalar, array) = (
            indent == 0 && first.starts_with('='),
            indent == 0 && first.starts_with("## ["),
        );
        if scalar {
            // `=value`, then at most the trailer and one line, which the decoder stops at.
            for _ in 0..3 {
                if !self.peek()? {
                    break;
                }
                self.take();
            }
            return self.end();
        }
        if array && !self.open_table()? {
            // A list, an inline array or a table with a layout: one unit.
            while self.peek()? {
                self.take();
            }
            return self.end();
        }
        self.units()
    }

    /// Reads the rest of a root object (or the rows of a root table opened before), cutting
    /// units where the module docs say.
    fn units(&mut self) -> Result<Value> {
        loop {
            if self.table.is_none() {
                // The member starting at the held line (a root table is opened by `run`).
                let (indent, text) = self.current();
                let section = indent == 0 && text.starts_with("## ") && text.contains('{');
                match section.then(|| self.plain_table()).flatten() {
                    Some(table) => {
                        // A table starts a unit of its own: its pieces hold it alone.
                        if self.kept > 1 {
                            self.flush()?;
                        }
                        self.table = Some(table);
                        self.take();
                    }
                    None => self.take(),
                }
            }
            // The member's lines, up to the next section line.
            loop {
                if !self.peek()? {
                    return self.end();
                }
                let (indent, text) = self.current();
                if indent == 0 && text.starts_with("##!") {
                    // The trailer ends the root: the decoder reads one line past it at most.
                    self.take();
                    if self.peek()? {
                        self.take();
                    }
                    self.done = true;
                    return self.end();
                }
                if indent == 0
                    && text.starts_with("## ")
                    && !text.starts_with("## [")
                    && self.table.as_ref().is_none_or(|t| t.key.is_some())
                {
                    break;
                }
                self.cut_before_row()?;
                self.take();
            }
            if self.text.len() >= self.opts.unit_size || self.table.is_some() {
                self.flush()?;
            }
        }
    }

    /// The table the held line opens, when it is one without a layout (the root table, or a
    /// root member).
    fn plain_table(&self) -> Option<Table> {
        let mut text = self.header.clone();
        text.push_str(self.bytes_text());
        text.push('\n');
        let (key, count) = de::opens_plain_table(&text, &self.opts)?;
        Some(Table {
            key,
            header: self.bytes_text().to_owned(),
            number: self.lines.number(),
            count,
            rows: 0,
            cuttable: true,
            before: Vec::new(),
        })
    }

    /// Takes the held line as the header of a table to read in pieces, when it opens a table
    /// without a layout (`false`, taking nothing, for any other line).
    fn open_table(&mut self) -> Result<bool> {
        let Some(table) = self.plain_table() else {
            return Ok(false);
        };
        self.table = Some(table);
        self.take();
        Ok(true)
    }

    /// In a table read in pieces, decodes the piece so far when the held line is a row to cut
    /// before, and starts the next piece with the table's header line.
    fn cut_before_row(&mut self) -> Result<()> {
        let Some(t) = &mut self.table else {
            return Ok(());
        };
        let (indent, text) = {
            let b = self.lines.bytes();
            let indent = b.iter().take_while(|&&c| c == b' ').count();
            (indent, &b[indent..])
        };
        let mut cut = false;
        if t.cuttable && indent == 0 {
            if text.starts_with(b"##") || text.starts_with(b".") {
                t.cuttable = false;
            } else if t.count.is_some_and(|n| t.rows >= n) {
                // Past the declared rows: the table has ended.
                t.cuttable = false;
            } else {
                cut = self.text.len() >= self.opts.unit_size;
                t.rows += 1;
            }
        }
        if t.cuttable && memchr::memchr(b'{', text).is_some() {
            // A schema later rows may use: this row starts the last piece.
            t.cuttable = false;
        }
        if cut {
            self.piece()?;
        }
        Ok(())
    }

    /// Decodes the current piece of the table (more rows follow it) and starts the next with
    /// the table's header line.
    fn piece(&mut self) -> Result<()> {
        let Some(t) = self.table.as_mut() else {
            return Ok(());
        };
        let resume = Resume {
            found: t.before.len() as u64,
            partial: true,
        };
        let rows = match &t.key {
            Some(key) if t.before.is_empty() => {
                // The first piece, with the members before it: its key is checked against
                // them. Its rows come out again (the last member: the order stays).
                decode(
                    &self.text,
                    &self.opts,
                    &mut self.carry,
                    Some(resume),
                    &self.map,
                )?;
                self.carry.members.remove(key)
            }
            Some(_) => {
                // A later piece: the member alone.
                let mut scratch = Carry {
                    members: serde_json::Map::new(),
                    deferred: std::mem::take(&mut self.carry.deferred),
                };
                let decoded = decode(
                    &self.text,
                    &self.opts,
                    &mut scratch,
                    Some(resume),
                    &self.map,
                );
                self.carry.deferred = scratch.deferred;
                decoded?;
                scratch.members.into_iter().next().map(|(_, v)| v)
            }
            None => decode(
                &self.text,
                &self.opts,
                &mut self.carry,
                Some(resume),
                &self.map,
            )?,
        };
        let Some(t) = self.table.as_mut() else {
            return Ok(());
        };
        if let Some(Value::Array(rows)) = rows {
            t.before.extend(rows);
        }
        let (header, number) = (t.header.clone(), t.number);
        self.reset();
        self.push(&header, number);
        Ok(())
    }

    /// Decodes the current unit (more follow it) and starts the next.
    fn flush(&mut self) -> Result<()> {
        let resume = self.resume();
        let decoded = decode(&self.text, &self.opts, &mut self.carry, resume, &self.map)?;
        self.join(decoded);
        self.reset();
        Ok(())
    }

    /// Decodes the last unit and gives the payload's value.
    fn end(&mut self) -> Result<Value> {
        let resume = self.resume();
        let to_input = |at: Position| Position {
            line: self.map.input_line(at.line),
            column: at.column,
        };
        let decoded = de::decode_unit(
            &self.text,
            &self.opts,
            &mut self.carry,
            resume,
            &to_input,
            true,
        )
        .map_err(|e| {
            let e = self.map.fix(e);
            if e.kind() == ErrorKind::TruncatedInput {
                // The line after the last one: the input's, blank and comment lines included.
                let line = self.lines.number().max(1) as u64;
                return e.with_position(Position { line, column: 1 });
            }
            e
        })?;
        match self.join(decoded) {
            Some(value) => Ok(value),
            None => Ok(Value::Object(std::mem::take(&mut self.carry.members))),
        }
    }

    /// How the current unit's table resumes: after the rows of the pieces before it.
    fn resume(&self) -> Option<Resume> {
        self.table
            .as_ref()
            .filter(|t| !t.before.is_empty())
            .map(|t| Resume {
                found: t.before.len() as u64,
                partial: false,
            })
    }

    /// Puts the rows of a table's earlier pieces before the rows of its last; gives a root
    /// that is not an object.
    fn join(&mut self, mut decoded: Option<Value>) -> Option<Value> {
        let Some(t) = self.table.take() else {
            return decoded;
        };
        let rows = match &t.key {
            Some(key) => self.carry.members.get_mut(key),
            None => decoded.as_mut(),
        };
        if let Some(Value::Array(rows)) = rows {
            let tail = std::mem::replace(rows, t.before);
            rows.extend(tail);
        }
        decoded
    }

    /// Starts a new unit: the header line alone.
    fn reset(&mut self) {
        self.text.clear();
        self.text.push_str(&self.header);
        self.map = LineMap::default();
        self.kept = 1;
        self.dropped = 0;
        self.longest = self.header.len() - 1;
    }

    /// Makes the next significant line the held one; `false` at the end of input (or when
    /// nothing more is read). A line that cannot be read is reported after the current unit
    /// (see the module docs).
    fn peek(&mut self) -> Result<bool> {
        if self.held {
            return Ok(true);
        }
        if self.done {
            return Ok(false);
        }
        loop {
            match self
                .lines
                .advance()
                .and_then(|more| Ok(more && is_significant(&self.lines.line()?)).map(|s| (more, s)))
            {
                Ok((false, _)) => return Ok(false),
                Ok((true, true)) => {
                    self.held = true;
                    return Ok(true);
                }
                Ok((true, false)) => {}
                Err(e) => return Err(self.unreadable(e)),
            }
        }
    }

    /// The error for a line that could not be read: the current unit's first error when a
    /// stand-in for a line past the limit shows one (the in-memory decoder reads up to that
    /// line first), else `e`. The stand-in is one byte longer than the unit's longest line
    /// (and the unit is decoded with that as its limit): past the limit, and no longer.
    #[cold]
    fn unreadable(&mut self, e: Error) -> Error {
        let (ErrorKind::LimitExceeded(Limit::LineLength), Some(line)) = (e.kind(), e.line()) else {
            return e;
        };
        let mut opts = self.opts.clone();
        opts.limits.max_line_length = self.longest.min(opts.limits.max_line_length);
        self.text.reserve_exact(self.longest + 2);
        self.text
            .extend(std::iter::repeat_n('x', opts.limits.max_line_length + 1));
        self.text.push('\n');
        self.kept += 1;
        self.record(line as usize);
        let resume = self.resume().or_else(|| {
            self.table.as_ref().map(|t| Resume {
                found: t.before.len() as u64,
                partial: true,
            })
        });
        let mut carry = Carry {
            members: std::mem::take(&mut self.carry.members),
            deferred: Vec::new(),
        };
        match decode(&self.text, &opts, &mut carry, resume, &self.map) {
            // The stand-in's own error: the reader's is the one to report.
            Err(found) if found.kind() == e.kind() && found.line() == Some(line) => e,
            Err(found) => found,
            Ok(_) => e,
        }
    }

    /// The held line's indentation and content.
    fn current(&self) -> (usize, &str) {
        let text = self.bytes_text();
        let indent = text.bytes().take_while(|&b| b == b' ').count();
        (indent, &text[indent..])
    }

    /// The held line (checked as UTF-8 when it was read).
    fn bytes_text(&self) -> &str {
        std::str::from_utf8(self.lines.bytes()).unwrap_or_default()
    }

    /// Adds the held line to the current unit.
    fn take(&mut self) {
        self.held = false;
        let number = self.lines.number();
        let line = std::str::from_utf8(self.lines.bytes()).unwrap_or_default();
        self.longest = self.longest.max(line.len());
        self.text.push_str(line);
        self.text.push('\n');
        self.kept += 1;
        self.record(number);
    }

    /// Adds `line`, input line `number`, to the current unit.
    fn push(&mut self, line: &str, number: usize) {
        self.longest = self.longest.max(line.len());
        self.text.push_str(line);
        self.text.push('\n');
        self.kept += 1;
        self.record(number);
    }

    /// Records that the last line of the unit is input line `number`.
    fn record(&mut self, number: usize) {
        let dropped = number.saturating_sub(self.kept);
        if dropped != self.dropped {
            self.map.skip_before(self.kept, dropped);
            self.dropped = dropped;
        }
    }
}

/// [`de::decode_unit`] for a unit that more units follow, its errors at the input's positions.
fn decode(
    text: &str,
    opts: &DecoderOptions,
    carry: &mut Carry,
    resume: Option<Resume>,
    map: &LineMap,
) -> Result<Option<Value>> {
    let to_input = |at: Position| Position {
        line: map.input_line(at.line),
        column: at.column,
    };
    de::decode_unit(text, opts, carry, resume, &to_input, false).map_err(|e| map.fix(e))
}
