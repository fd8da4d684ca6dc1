//! `from_reader`: the payload read a unit at a time, never whole.
//!
//! A unit is a run of the root's lines that the in-memory decoder ([`de::decode_unit`],
//! [`UnitParser`]) reads on its own exactly as it reads them inside the whole payload.
//! [`Units::next_cut`] reads the next unit, cut where the grammar allows:
//!
//! - a root object is cut before its `## key ...` section lines (at indentation 0): every
//!   value before such a line ends there (an object's members are indented, a table's rows
//!   and a list's items stop at a `##` line). A unit gathers lines up to
//!   [`DecoderOptions::stream_unit_size`] bytes (64 KiB) and is decoded at the next such
//!   line; a table member starts a unit of its own. The members decoded so far go with each
//!   unit, which checks a repeated key and the element limit against them, and the deferred
//!   `[?]` sections found so far go with the last, which checks them against the trailer;
//! - a table whose rows stand alone (a root table, or a root member that is one: plain,
//!   flattened `a>b` and constant columns; see `rows_stand_alone` in de.rs) is cut between its
//!   rows into pieces of about that size: each piece is the table's header line and the next
//!   rows, read as the continuation of the rows before it ([`Resume`]: `@N` row ids, the
//!   count and the element limit go on from there), and its rows join the ones read before.
//!   A table stops being cut once a row has a `{` in its lines (an inline or shared schema
//!   later rows may use) or a `.field` line at the table's level;
//! - a list of `@N` items (the root, or a root member) is cut before an item (a `@` line at
//!   indentation 0: the item before it ends there, its content being indented) into pieces
//!   of about that size, read the same way (the item index, the count and the element limit
//!   go on);
//! - a `## key` section of the root is cut inside as well, at any depth
//!   ([`Units::cut_in_section`]): before a `## ...` member line of the innermost open section
//!   (`## key` sections at indentation 0, 2, 4... one in the other, tracked as the lines go;
//!   every value before such a line at its level ends there) when the unit has reached its
//!   size, and a table or list to read in pieces that is a member of a section starts a unit
//!   of its own and is cut between rows or items as above. A unit cut inside sections starts
//!   (after the header line) with the lines of the sections open there, at their input lines:
//!   the decoder re-enters them ([`Carry::reopen`]) and goes on in the objects already built,
//!   so a repeated key is `duplicate_key` at its line and the element limit counts the
//!   members before; the deferred `[?]` sections go on to the last unit as above;
//! - anything else is one unit: a root scalar; a table whose layout is checked across rows
//!   (a keyed map's keys, an identity column's values, value groups carry from row to row,
//!   which a [`Resume`] does not carry); a section whose key is quoted (`## "a b"`, not
//!   tracked) with everything nested in it; anything nested in a value other than a section
//!   (a list item's object, a row's `.field` body).
//!
//! Into a `serde_json::Value` ([`value_from_reader`]), each unit is decoded into the value as
//! it is cut. Into any other `T` ([`from_reader`]), `T`'s visitors pull the units: the root
//! object's members, and a section's ([`Section`]: the unit parser re-enters the sections a
//! unit starts in, and a section ends where a unit starts past it), are read from one unit
//! after another by a [`UnitParser`] (the in-memory `ObjectAccess` reading, its repeated-key
//! and element checks carried across units for each open section), the
//! rows of a table in pieces continue from piece to piece, and every string goes to the
//! visitors as an owned one (`owned.rs`), so that `T` never points into a unit.
//!
//! So memory holds the value being built, one unit's text (about 64 KiB, or the largest
//! uncut table or section with a quoted key), and the current line (bounded by the line limit). Blank and
//! comment lines are never kept (a run of them costs one entry of a [`LineMap`]).
//!
//! Errors are the in-memory decoder's, at the input's positions (the oracle
//! `agentwire_testkit::gcf::check_from_reader` compares the two), except that malformed UTF-8
//! and the input-size limit are found where they are read, not before anything else. A line
//! past the line limit is read no further than its limit: the unit before it is decoded with
//! a stand-in line past its longest line in its place, so that an earlier error in that unit
//! is the one reported, as the in-memory decoder reports it (into a `T`, that unit is the
//! last, read as the visitors ask, and the reader's error replaces the stand-in's).

use std::collections::HashSet;
use std::io::BufRead;

use serde::de::{self as serde_de, DeserializeOwned, DeserializeSeed, IgnoredAny, Visitor};
use serde::forward_to_deserialize_any;
use serde_json::Value;

use super::de::{self, AsMap, AsSeq, Carry, Resume, UnitParser, UnitRoot};
use super::owned;
use crate::error::{Error, ErrorKind, Limit, Position, Result};
use crate::options::DecoderOptions;
use crate::read::{is_significant, push_line, LineMap, LineReader};

/// Decodes the generic payload `reader` holds into a `serde_json::Value`, a unit at a time.
pub(crate) fn value_from_reader<R: BufRead>(reader: R, opts: &DecoderOptions) -> Result<Value> {
    Units::new(reader, opts, false).run()
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
    /// Whether it is a list of `@N` items (cut before an item) rather than a table.
    list: bool,
    /// The rows of the pieces decoded so far.
    before: Vec<Value>,
    /// The indentation of its header line and rows, and the keys of the sections it is
    /// nested in (from the root's member), empty for the root or a root member.
    indent: usize,
    path: Vec<String>,
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
    /// Where [`Units::next_cut`] goes on.
    stage: Stage,
    /// Whether the held line was checked as a row to cut before.
    checked: bool,
    /// What sets the last unit aside before the next is read.
    after: After,
    /// Whether a line that cannot be read ends the last unit (the typed reader: see
    /// [`Units::peek`]) rather than being reported at once.
    lazy: bool,
    /// With `lazy`, the error of the line that could not be read, and the options its unit
    /// (ending with a stand-in for it) is decoded with.
    failed: Option<(Error, DecoderOptions)>,
    /// The `## key` sections the held line is in, one in the other from a root member: each
    /// line (with its indentation), its line in the input, and its key. A unit cut inside
    /// them starts with these lines, which re-enter them ([`Carry::reopen`]).
    sections: Vec<(String, usize, String)>,
}

/// Where a unit was cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cut {
    /// The input is empty: not even a header line.
    Empty,
    /// More units follow (a table in the unit has ended).
    Unit,
    /// The unit is a piece of a table whose rows go on in the next.
    Piece,
    /// The unit is the last.
    End,
}

/// Where [`Units::next_cut`] goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Before the header line.
    Begin,
    /// At a member of the root object (the held line).
    Member,
    /// In a member's lines (or a root table's rows).
    Lines,
}

/// What sets the last unit aside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum After {
    Nothing,
    /// The next unit starts with the header line alone.
    Reset,
    /// The next unit is the next piece of the table.
    Piece,
}

impl<R: BufRead> Units<R> {
    fn new(reader: R, opts: &DecoderOptions, lazy: bool) -> Self {
        Units {
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
            stage: Stage::Begin,
            checked: false,
            after: After::Nothing,
            lazy,
            failed: None,
            sections: Vec::new(),
        }
    }

    fn run(&mut self) -> Result<Value> {
        loop {
            match self.next_cut()? {
                Cut::Empty => {
                    // The in-memory decoder's error for an empty payload.
                    return de::decode_value("", &self.opts);
                }
                Cut::Unit => self.flush()?,
                Cut::Piece => self.piece()?,
                Cut::End => return self.end(),
            }
        }
    }

    /// Reads the next unit into `text` (after the one before is set aside), cutting where
    /// the module docs say; the payload's header line first.
    fn next_cut(&mut self) -> Result<Cut> {
        match std::mem::replace(&mut self.after, After::Nothing) {
            After::Nothing => {}
            After::Reset => {
                self.reset();
                self.reopen();
            }
            After::Piece => {
                // The next piece of the table starts with the table's header line.
                if let Some((header, number)) =
                    self.table.as_ref().map(|t| (t.header.clone(), t.number))
                {
                    self.reset();
                    self.reopen();
                    self.push(&header, number);
                }
            }
        }
        if self.stage == Stage::Begin {
            self.stage = Stage::Member;
            if !self.lines.advance()? {
                return Ok(Cut::Empty);
            }
            self.lines.line()?;
            self.header.clear();
            push_line(
                &mut self.header,
                &String::from_utf8_lossy(self.lines.bytes()),
            );
            self.reset();
            if !self.peek()? {
                return Ok(Cut::End);
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
                return Ok(Cut::End);
            }
            if array {
                if !self.open_table()? {
                    // A list, an inline array or a table with a layout: one unit.
                    while self.peek()? {
                        self.take();
                    }
                    return Ok(Cut::End);
                }
                self.stage = Stage::Lines;
            }
        }
        loop {
            if self.stage == Stage::Member {
                // The member starting at the held line (a root table is opened above).
                if self.table.is_none() {
                    let (indent, text) = self.current();
                    let section = indent == 0 && text.starts_with("## ");
                    let table = section
                        .then(|| {
                            if text.contains('{') {
                                self.plain_table()
                            } else if text.contains(" [") {
                                self.item_list()
                            } else {
                                None
                            }
                        })
                        .flatten();
                    match table {
                        Some(table) => {
                            // A table starts a unit of its own: its pieces hold it alone.
                            if self.kept > 1 {
                                self.after = After::Reset;
                                return Ok(Cut::Unit);
                            }
                            self.table = Some(table);
                            self.take();
                        }
                        None => {
                            if section && is_section(text) {
                                let entry =
                                    (text.to_owned(), self.lines.number(), text[3..].into());
                                self.sections.push(entry);
                            }
                            self.take();
                        }
                    }
                }
                self.stage = Stage::Lines;
            }
            // The member's lines, up to the next section line.
            loop {
                if !self.peek()? {
                    return Ok(Cut::End);
                }
                let (indent, text) = self.current();
                if indent == 0 && text.starts_with("##!") {
                    // The trailer ends the root: the decoder reads one line past it at most.
                    self.take();
                    if self.peek()? {
                        self.take();
                    }
                    self.done = true;
                    return Ok(Cut::End);
                }
                if indent == 0
                    && text.starts_with("## ")
                    && !text.starts_with("## [")
                    && self.table.as_ref().is_none_or(|t| t.key.is_some())
                {
                    self.sections.clear();
                    break;
                }
                if !self.sections.is_empty() {
                    match self.cut_in_section() {
                        Some(true) => {
                            self.after = After::Reset;
                            return Ok(Cut::Unit);
                        }
                        // The header line of a table in pieces, taken.
                        Some(false) => continue,
                        None => {}
                    }
                }
                if !self.checked && self.cut_before_row() {
                    self.checked = true;
                    self.after = After::Piece;
                    return Ok(Cut::Piece);
                }
                self.checked = false;
                self.take();
            }
            self.stage = Stage::Member;
            if self.text.len() >= self.opts.unit_size || self.table.is_some() {
                self.after = After::Reset;
                return Ok(Cut::Unit);
            }
        }
    }

    /// The table the held line opens, when its rows stand alone (the root table, or a root
    /// member).
    fn plain_table(&self) -> Option<Table> {
        let mut text = self.header.clone();
        push_line(&mut text, self.bytes_text());
        let (key, count) = de::opens_plain_table(&text, &self.opts)?;
        Some(Table {
            key,
            header: self.bytes_text().to_owned(),
            number: self.lines.number(),
            count,
            rows: 0,
            cuttable: true,
            list: false,
            before: Vec::new(),
            indent: 0,
            path: Vec::new(),
        })
    }

    /// The list of `@N` items the held line opens (the root, or a root member), if it is one.
    fn item_list(&self) -> Option<Table> {
        let mut text = self.header.clone();
        push_line(&mut text, self.bytes_text());
        let (key, count) = de::opens_item_list(&text, &self.opts)?;
        Some(Table {
            key,
            header: self.bytes_text().to_owned(),
            number: self.lines.number(),
            count,
            rows: 0,
            cuttable: true,
            list: true,
            before: Vec::new(),
            indent: 0,
            path: Vec::new(),
        })
    }

    /// In a section of a root member (into a `Value`), keeps track of the sections the held
    /// line is in, and whether to cut before it: a `## ...` member line of the innermost
    /// section (every value before it at its level ends there) when the unit has reached its
    /// size, or when it opens a table or list to read in pieces (which starts a unit of its
    /// own, then opened here: `Some(false)`, the line taken). `None` to go on with the line.
    fn cut_in_section(&mut self) -> Option<bool> {
        let (indent, member) = {
            let (indent, text) = self.current();
            (indent, text.starts_with("## ").then(|| is_section(text)))
        };
        // A section's line is its indentation, `## ` and its key.
        let level = |s: &(String, usize, String)| s.0.len() - s.2.len() - 3;
        while self.sections.last().is_some_and(|s| level(s) + 2 > indent) {
            self.sections.pop();
        }
        let top = self.sections.last()?;
        let section = member.filter(|_| indent == level(top) + 2)?;
        let started = self.kept > 1 + self.carry.reopen;
        if section {
            if started && self.text.len() >= self.opts.unit_size {
                return Some(true);
            }
            let line = self.bytes_text();
            let entry = (
                line.to_owned(),
                self.lines.number(),
                line[indent + 3..].to_owned(),
            );
            self.sections.push(entry);
            return None;
        }
        let mut table = self.nested_table(indent)?;
        if started || self.table.is_some() {
            return Some(true);
        }
        table.indent = indent;
        table.path = self.sections.iter().map(|s| s.2.clone()).collect();
        self.table = Some(table);
        self.take();
        Some(false)
    }

    /// The table or list to read in pieces the held line (indented by `indent`) opens.
    fn nested_table(&self, indent: usize) -> Option<Table> {
        let line = &self.bytes_text()[indent..];
        let text = format!("{}{line}\n", self.header);
        let (key, count, list) = match de::opens_plain_table(&text, &self.opts) {
            Some((key, count)) => (key, count, false),
            None => {
                let (key, count) = de::opens_item_list(&text, &self.opts)?;
                (key, count, true)
            }
        };
        Some(Table {
            key,
            header: self.bytes_text().to_owned(),
            number: self.lines.number(),
            count,
            rows: 0,
            cuttable: true,
            list,
            before: Vec::new(),
            indent,
            path: Vec::new(),
        })
    }

    /// Starts the current unit (after its header line) with the lines of the sections the
    /// held line is in.
    fn reopen(&mut self) {
        let sections = std::mem::take(&mut self.sections);
        for (line, number, _) in &sections {
            self.push(line, *number);
        }
        self.carry.reopen = sections.len();
        self.sections = sections;
    }

    /// Takes the held line as the header of a table to read in pieces, when it opens a table
    /// without a layout (`false`, taking nothing, for any other line).
    fn open_table(&mut self) -> Result<bool> {
        let Some(table) = self.plain_table().or_else(|| self.item_list()) else {
            return Ok(false);
        };
        self.table = Some(table);
        self.take();
        Ok(true)
    }

    /// In a table read in pieces, whether the held line is a row to cut before (the piece so
    /// far is then a unit of its own, and the next starts with the table's header line).
    fn cut_before_row(&mut self) -> bool {
        let Some(t) = &mut self.table else {
            return false;
        };
        let (indent, text) = {
            let b = self.lines.bytes();
            let indent = b.iter().take_while(|&&c| c == b' ').count();
            (indent, &b[indent..])
        };
        if text.first() == Some(&b'\t') {
            // A tab-indented line: the decoder refuses it where it looks past the row
            // before it (for its attachments), so it stays in that row's piece.
            return false;
        }
        let mut cut = false;
        if indent < t.indent {
            // Out of a nested table: it has ended.
            t.cuttable = false;
        }
        if t.list {
            // Before an item (`@` at the list's level): the items before it end there.
            if t.cuttable && indent == t.indent {
                if !text.starts_with(b"@") || t.count.is_some_and(|n| t.rows >= n) {
                    // The list has ended.
                    t.cuttable = false;
                } else {
                    cut = self.text.len() >= self.opts.unit_size;
                    t.rows += 1;
                }
            }
            return cut;
        }
        if t.cuttable && indent == t.indent {
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
        cut
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
            Some(key) if !t.path.is_empty() => {
                // A nested table: the unit re-enters its sections, whose members are carried.
                let (key, path) = (key.clone(), t.path.clone());
                decode(
                    &self.text,
                    &self.opts,
                    &mut self.carry,
                    Some(resume),
                    &self.map,
                )?;
                section(&mut self.carry.members, &path).and_then(|m| m.remove(&key))
            }
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
                    reopen: 0,
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
        Ok(())
    }

    /// Decodes the current unit (more follow it) and starts the next.
    fn flush(&mut self) -> Result<()> {
        let resume = self.resume();
        let decoded = decode(&self.text, &self.opts, &mut self.carry, resume, &self.map)?;
        self.join(decoded);
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
            Some(key) => section(&mut self.carry.members, &t.path).and_then(|m| m.get_mut(key)),
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
        self.carry.reopen = 0;
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
                Err(e) if self.lazy => {
                    // The unit ends with a stand-in for the line, decoded as the last: its
                    // first error is found as the value is built (see `stand_in`).
                    let Some(opts) = self.stand_in(&e) else {
                        return Err(e);
                    };
                    self.failed = Some((e, opts));
                    self.done = true;
                    return Ok(false);
                }
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
        let Some(opts) = self.stand_in(&e) else {
            return e;
        };
        let line = e.line();
        let resume = self.resume().or_else(|| {
            self.table.as_ref().map(|t| Resume {
                found: t.before.len() as u64,
                partial: true,
            })
        });
        let mut carry = Carry {
            members: std::mem::take(&mut self.carry.members),
            deferred: Vec::new(),
            reopen: self.carry.reopen,
        };
        match decode(&self.text, &opts, &mut carry, resume, &self.map) {
            // The stand-in's own error: the reader's is the one to report.
            Err(found) if found.kind() == e.kind() && found.line() == line => e,
            Err(found) => found,
            Ok(_) => e,
        }
    }

    /// For a line past the line limit (`e`), adds a stand-in for it to the current unit:
    /// one byte longer than the unit's longest line, and the options to decode the unit with
    /// (that length as the limit), so that the stand-in is past the limit and no line before
    /// it is. `None` for any other error.
    fn stand_in(&mut self, e: &Error) -> Option<DecoderOptions> {
        let (ErrorKind::LimitExceeded(Limit::LineLength), Some(line)) = (e.kind(), e.line()) else {
            return None;
        };
        let mut opts = self.opts.clone();
        opts.limits.max_line_length = self.longest.min(opts.limits.max_line_length);
        self.text.reserve_exact(self.longest + 2);
        self.text
            .extend(std::iter::repeat_n('x', opts.limits.max_line_length + 1));
        self.text.push('\n');
        self.kept += 1;
        self.record(line as usize);
        Some(opts)
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
        push_line(&mut self.text, line);
        self.kept += 1;
        self.record(number);
    }

    /// Adds `line`, input line `number`, to the current unit.
    fn push(&mut self, line: &str, number: usize) {
        self.longest = self.longest.max(line.len());
        push_line(&mut self.text, line);
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

/// Whether `text` (a line after its indentation) opens an object section: `## key`, the key
/// bare.
fn is_section(text: &str) -> bool {
    text.strip_prefix("## ")
        .is_some_and(|key| !key.is_empty() && crate::lex::bare_key_len(key) == key.len())
}

/// The object the sections `path` lead to from the root's `members`.
fn section<'m>(
    members: &'m mut serde_json::Map<String, Value>,
    path: &[String],
) -> Option<&'m mut serde_json::Map<String, Value>> {
    path.iter()
        .try_fold(members, |m, key| m.get_mut(key)?.as_object_mut())
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

/// Decodes the generic payload `reader` holds into any `T`, a unit at a time: the units
/// [`Units`] cuts, each read by the in-memory deserializer as the visitors ask for it (see
/// [`UnitParser`]).
pub(crate) fn from_reader<R: BufRead, T: DeserializeOwned>(
    reader: R,
    opts: &DecoderOptions,
) -> Result<T> {
    let mut typed = Typed {
        units: Units::new(reader, opts, true),
        unit: None,
        map: LineMap::default(),
        cut: Cut::End,
        keys: HashSet::new(),
        found: 0,
        deferred: Vec::new(),
        skip_table: false,
        root_table: false,
        reopen: 0,
        sections: Vec::new(),
    };
    let cut = typed.units.next_cut()?;
    if cut == Cut::Empty {
        // The in-memory decoder's error for an empty payload.
        return de::decode("", opts);
    }
    let body = &typed.units.text[typed.units.header.len()..];
    typed.root_table = typed.units.table.as_ref().is_some_and(|t| t.key.is_none());
    if !typed.root_table && (body.starts_with('=') || body.starts_with("## [")) {
        // A root scalar, list or array that is not cut: the unit is the whole payload.
        typed.cut = cut;
        typed.map = std::mem::take(&mut typed.units.map);
        let text = std::mem::take(&mut typed.units.text);
        let opts = typed.unit_options();
        return match de::decode::<T>(&text, &opts) {
            Ok(value) => typed.failed().map_or(Ok(value), Err),
            Err(e) => Err(typed.fix(e)),
        };
    }
    typed.open(cut)?;
    let value = T::deserialize(TypedDe(&mut typed))?;
    typed.finish()?;
    Ok(value)
}

/// The state of [`from_reader`] into a `T`.
struct Typed<R> {
    units: Units<R>,
    /// The current unit's parser, its line map, and where it was cut.
    unit: Option<UnitParser>,
    map: LineMap,
    cut: Cut,
    /// The root object's keys so far, and its members (for the element limit).
    keys: HashSet<String>,
    found: u64,
    /// The deferred `[?]` sections of the units before, at the input's positions.
    deferred: Vec<(Position, u64)>,
    /// Whether the member read last is a table in pieces whose value is still to read.
    skip_table: bool,
    /// Whether the root is a table whose rows stand alone (read in pieces).
    root_table: bool,
    /// The sections the current unit re-enters ([`Carry::reopen`]).
    reopen: usize,
    /// The keys and member counts of the open sections below the root object, innermost
    /// last (a repeated key and the element limit are checked against them across units).
    sections: Vec<(HashSet<String>, u64)>,
}

impl<R: BufRead> Typed<R> {
    /// The options the current unit is read with (a smaller line limit in a unit that ends
    /// with a stand-in for a line past the limit: see [`Units::stand_in`]).
    fn unit_options(&self) -> DecoderOptions {
        match &self.units.failed {
            Some((_, opts)) => opts.clone(),
            None => self.opts().clone(),
        }
    }

    fn opts(&self) -> &DecoderOptions {
        &self.units.opts
    }

    /// The error of a line that could not be read, when its unit was read without error.
    fn failed(&mut self) -> Option<Error> {
        self.units.failed.take().map(|(e, _)| e)
    }

    /// `e`, found in the current unit, at the input's position: the reader's error for a
    /// stand-in's line, and the input's last line for the end of the payload.
    fn fix(&mut self, e: Error) -> Error {
        let e = self.map.fix(e);
        if let Some((failed, _)) = &self.units.failed {
            if e.kind() == failed.kind() && e.line() == failed.line() {
                return self.failed().unwrap_or(e);
            }
        }
        if self.cut == Cut::End && e.kind() == ErrorKind::TruncatedInput {
            // The line after the last one: the input's, blank and comment lines included.
            let line = self.units.lines.number().max(1) as u64;
            return e.with_position(Position { line, column: 1 });
        }
        e
    }

    /// Makes the unit just cut (`cut`) the current one.
    fn open(&mut self, cut: Cut) -> Result<UnitRoot> {
        if let Some(mut old) = self.unit.take() {
            let found = old.take_deferred();
            self.keep_deferred(found);
        }
        self.cut = cut;
        if cut == Cut::Unit {
            // A table the unit holds has ended in it.
            self.units.table = None;
        }
        self.map = std::mem::take(&mut self.units.map);
        let text = std::mem::take(&mut self.units.text);
        let opts = self.unit_options();
        self.reopen = self.units.carry.reopen;
        match UnitParser::new(text, &opts, self.reopen) {
            Ok((unit, root)) => {
                self.unit = Some(unit);
                Ok(root)
            }
            Err(e) => Err(self.fix(e)),
        }
    }

    /// Keeps the deferred `[?]` sections the current unit `found`, at the input's positions.
    fn keep_deferred(&mut self, found: Vec<(Position, u64)>) {
        let map = &self.map;
        self.deferred.extend(found.into_iter().map(|(at, n)| {
            (
                Position {
                    line: map.input_line(at.line),
                    column: at.column,
                },
                n,
            )
        }));
    }

    /// Cuts and opens the next unit.
    fn next(&mut self) -> Result<UnitRoot> {
        let cut = self.units.next_cut()?;
        self.open(cut)
    }

    /// Runs `f` on the current unit, its error at the input's position.
    fn with<T>(&mut self, f: impl FnOnce(&mut UnitParser) -> Result<T>) -> Result<T> {
        let Some(unit) = self.unit.as_mut() else {
            return Err(Error::new(ErrorKind::InvalidLine, "internal: no unit"));
        };
        f(unit).map_err(|e| self.fix(e))
    }

    /// Ends the payload in the current unit (the last), with every unit's deferred sections.
    fn finish(&mut self) -> Result<()> {
        let Some(unit) = self.unit.as_mut() else {
            return Ok(());
        };
        let found = unit.take_deferred();
        self.keep_deferred(found);
        let deferred = std::mem::take(&mut self.deferred);
        self.with(|unit| unit.finish(deferred))?;
        match self.failed() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Whether a member of the root object (`level` 0) or of the open section at `level`
    /// follows, opening the units it is in (after reading past the value before it, if the
    /// visitor skipped it). `false` where the object ends, the section left.
    fn at_member(&mut self, level: usize) -> Result<bool> {
        if std::mem::take(&mut self.skip_table) {
            serde_de::Deserializer::deserialize_ignored_any(Pieces(self), IgnoredAny)?;
        }
        if let Some(at) = self.pending_section()? {
            serde_de::Deserializer::deserialize_ignored_any(
                Section(self, level + 1, at),
                IgnoredAny,
            )?;
        }
        loop {
            if self.with(|unit| unit.at_member_in(level))? {
                return Ok(true);
            }
            if self.cut == Cut::End || self.with(UnitParser::has_next)? {
                break;
            }
            self.next()?;
            if self.reopen < level {
                // The unit starts past the section's end.
                break;
            }
        }
        if level > 0 {
            self.with(|unit| {
                unit.leave_section(level);
                Ok(())
            })?;
        }
        Ok(false)
    }

    /// Whether the value still to read is a section, read across units ([`Section`]): its
    /// line's position in the input.
    fn pending_section(&mut self) -> Result<Option<Position>> {
        let at = self.with(|unit| Ok(unit.pending_section()))?;
        Ok(at.map(|at| Position {
            line: self.map.input_line(at.line),
            column: at.column,
        }))
    }

    /// The key of the member [`Typed::at_member`] found, at `level`.
    fn key<'de, K: DeserializeSeed<'de>>(&mut self, level: usize, seed: K) -> Result<K::Value> {
        let (keys, found) = match level {
            0 => (&mut self.keys, &mut self.found),
            _ => match self.sections.last_mut() {
                Some((keys, found)) => (keys, found),
                None => (&mut self.keys, &mut self.found),
            },
        };
        let Some(unit) = self.unit.as_mut() else {
            return Err(Error::new(ErrorKind::InvalidLine, "internal: no unit"));
        };
        let key = unit.key_in(level, owned::Seed::new(seed), keys, found);
        let key = key.map_err(|e| self.fix(e))?;
        // A table that starts a unit cut before its end is read in pieces.
        self.skip_table = self.cut == Cut::Piece;
        Ok(key)
    }

    /// The value of the member [`Typed::key`] read, at `level`: a table in pieces, a section
    /// read across units, or any other value in the unit.
    fn value<'de, V: DeserializeSeed<'de>>(&mut self, level: usize, seed: V) -> Result<V::Value> {
        if std::mem::take(&mut self.skip_table) {
            return seed.deserialize(Pieces(self));
        }
        if let Some(at) = self.pending_section()? {
            return seed.deserialize(Section(self, level + 1, at));
        }
        self.with(|unit| unit.value(owned::Seed::new(seed)))
    }

    /// In a table read in pieces, opens the next piece (its rows resume after `found`).
    fn next_piece(&mut self) -> Result<()> {
        let found = self.unit.as_ref().map_or(0, UnitParser::rows_found);
        if self.next()? == UnitRoot::Object {
            let level = self.reopen;
            self.with(|unit| unit.reopen_member(level))?;
        }
        self.with(|unit| unit.start_rows(found)).map(drop)
    }
}

/// The payload's root as a deserializer, read a unit at a time.
struct TypedDe<'t, R>(&'t mut Typed<R>);

impl<'de, R: BufRead> serde_de::Deserializer<'de> for TypedDe<'_, R> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let t = self.0;
        if t.root_table {
            // A root table (in pieces, or in one last unit).
            return Pieces(t).deserialize_any(visitor);
        }
        let header = t.with(|unit| Ok(unit.header_position()))?;
        let mut access = SectionAccess(&mut *t, 0);
        let value = visitor
            .visit_map(&mut access)
            .map_err(|e| e.or_position(|| header))?;
        access.end(header)?;
        Ok(value)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        let t = self.0;
        if t.root_table {
            return Pieces(t).deserialize_any(visitor);
        }
        let header = t.with(|unit| Ok(unit.header_position()))?;
        let mut access = SectionAccess(&mut *t, 0);
        let value = visitor
            .visit_enum(&mut access)
            .map_err(|e| e.or_position(|| header))?;
        access.end_variant(header)?;
        Ok(value)
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

/// Reads past a value.
const SKIP: std::marker::PhantomData<IgnoredAny> = std::marker::PhantomData;

/// A table read in pieces (the root, or the member read last) as a deserializer: its rows
/// continue from piece to piece.
struct Pieces<'t, R>(&'t mut Typed<R>);

impl<'de, R: BufRead> serde_de::Deserializer<'de> for Pieces<'_, R> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let t = self.0;
        let at = t.with(|unit| unit.start_rows(0))?;
        let at = Position {
            line: t.map.input_line(at.line),
            column: at.column,
        };
        let mut rows = PieceRows(&mut *t);
        let value = visitor
            .visit_seq(&mut rows)
            .map_err(|e| e.or_position(|| at))?;
        // The visitor has stopped: what the table's end checks, in the piece its next row
        // is in.
        loop {
            if t.with(UnitParser::rows_left)? || t.cut != Cut::Piece {
                break;
            }
            t.next_piece()?;
        }
        t.with(UnitParser::end_rows)?;
        Ok(value)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

/// The rows of a table read in pieces.
struct PieceRows<'t, R>(&'t mut Typed<R>);

impl<'de, R: BufRead> serde_de::SeqAccess<'de> for PieceRows<'_, R> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        let t = &mut *self.0;
        loop {
            if t.with(UnitParser::rows_left)? {
                return t.with(|unit| unit.row(owned::Seed::new(seed)));
            }
            if t.cut != Cut::Piece {
                return Ok(None);
            }
            t.next_piece()?;
        }
    }
}

/// A section (`## key` object) below the root, at `level`, its line at `.2` in the input, as a
/// deserializer: its members read from one unit after another (what the in-memory
/// deserializer reads an object of member lines as, within one unit).
struct Section<'t, R>(&'t mut Typed<R>, usize, Position);

impl<R: BufRead> Section<'_, R> {
    /// Enters the section, reads it with `read`, and leaves it.
    fn read<T>(self, read: impl FnOnce(&mut SectionAccess<'_, R>) -> Result<T>) -> Result<T> {
        let Section(t, level, at) = self;
        t.with(UnitParser::enter_section)?;
        t.sections.push((HashSet::new(), 0));
        let mut access = SectionAccess(&mut *t, level);
        let value = read(&mut access);
        t.sections.pop();
        value.map_err(|e| e.or_position(|| at))
    }
}

impl<'de, R: BufRead> serde_de::Deserializer<'de> for Section<'_, R> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let at = self.2;
        self.read(|access| {
            let value = visitor.visit_map(&mut *access)?;
            access.end(at)?;
            Ok(value)
        })
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        let at = self.2;
        self.read(|access| {
            let value = visitor.visit_enum(&mut *access)?;
            access.end_variant(at)?;
            Ok(value)
        })
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

/// The members of the root object (level 0) or of a [`Section`] at its level, across units.
struct SectionAccess<'t, R>(&'t mut Typed<R>, usize);

impl<R: BufRead> SectionAccess<'_, R> {
    /// After the visitor of the object (opened at `at`): it must have read every member.
    fn end(&mut self, at: Position) -> Result<()> {
        if self.0.with(|unit| Ok(unit.value_pending()))?
            || serde_de::MapAccess::next_key_seed(self, SKIP)?.is_some()
        {
            return Err(Error::new(
                ErrorKind::TypeMismatch,
                "the object has more members than the target type reads",
            )
            .with_position(at));
        }
        Ok(())
    }

    /// After the visitor of an enum, the object (opened at `at`) read as a variant: it must
    /// have had one member.
    fn end_variant(&mut self, at: Position) -> Result<()> {
        if serde_de::MapAccess::next_key_seed(self, SKIP)?.is_some() {
            return Err(Error::new(
                ErrorKind::TypeMismatch,
                "an enum variant is an object with exactly one member",
            )
            .with_position(at));
        }
        Ok(())
    }
}

impl<'de, R: BufRead> serde_de::MapAccess<'de> for SectionAccess<'_, R> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        let (t, level) = (&mut *self.0, self.1);
        if !t.at_member(level)? {
            return Ok(None);
        }
        t.key(level, seed).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        self.0.value(self.1, seed)
    }
}

impl<'de, R: BufRead> serde_de::EnumAccess<'de> for &mut SectionAccess<'_, R> {
    type Error = Error;
    type Variant = Self;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Self)> {
        match serde_de::MapAccess::next_key_seed(self, seed)? {
            Some(variant) => Ok((variant, self)),
            None => Err(Error::new(
                ErrorKind::TypeMismatch,
                "an enum variant is a string or an object with exactly one member",
            )),
        }
    }
}

impl<'de, R: BufRead> serde_de::VariantAccess<'de> for &mut SectionAccess<'_, R> {
    type Error = Error;

    fn unit_variant(self) -> Result<()> {
        serde_de::MapAccess::next_value_seed(self, std::marker::PhantomData::<()>)
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value> {
        serde_de::MapAccess::next_value_seed(self, seed)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value> {
        serde_de::MapAccess::next_value_seed(self, AsSeq(visitor))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        serde_de::MapAccess::next_value_seed(self, AsMap(visitor))
    }
}
