//! The in-memory deserializer over one unit of a payload read a unit at a time, for
//! `from_reader` into any `T` (`units.rs` cuts the units and drives this): the root object's
//! members one at a time, and the rows of a table read in pieces one at a time, each read
//! exactly as [`ObjectAccess`] and [`RowSeq`] read them in the whole payload.
//!
//! A unit parser owns its text and borrows from it: its parser's lifetime is a nominal
//! `'static`. Nothing borrowed leaves it: values go to seeds that take strings as transient
//! ones (`owned.rs`), errors own their messages, keys are copied.

use std::collections::HashSet;

use super::*;

/// What a unit's root is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UnitRoot {
    /// An object: its members are read with [`UnitParser::key_in`] and [`UnitParser::value`].
    Object,
    /// A table without a layout or a list of `@N` items: its rows or items are read with
    /// [`UnitParser::start_rows`].
    Table,
}

/// One unit's parser (see the module docs).
pub(crate) struct UnitParser {
    /// Dropped before `text` is freed (see `Drop`).
    p: std::mem::ManuallyDrop<Parser<'static>>,
    root: Root,
    header: Line<'static>,
    pending: Option<Pending<'static>>,
    /// The table or list whose rows or items [`UnitParser::row`] reads.
    table: Option<Seq>,
    /// Whether the table was entered (its depth counted).
    entered: bool,
    /// The unit's text, which `p` borrows: owned through a raw pointer (from
    /// `Box::into_raw`), so that moving the parser never moves or reasserts the box while
    /// borrows of its contents live; freed in `Drop`.
    text: *mut str,
}

impl Drop for UnitParser {
    fn drop(&mut self) {
        // Everything that borrows the text first (none of it reads the text when dropped).
        self.pending = None;
        self.table = None;
        // SAFETY: `p` is dropped once, here, and not used after; `text` came from
        // `Box::into_raw` in `UnitParser::new` and is freed once, after its last borrower.
        #[allow(unsafe_code)]
        unsafe {
            std::mem::ManuallyDrop::drop(&mut self.p);
            drop(Box::from_raw(self.text));
        }
    }
}

impl UnitParser {
    /// A parser over `text` (the payload's header line and a run of the root's lines), its
    /// header read and its root opened: a root object is entered, a root table's header read.
    /// The unit starts (after its header line) with `reopen` section lines, re-entered (see
    /// [`Carry::reopen`]): its members are read at level `reopen`.
    pub(crate) fn new(
        text: String,
        opts: &DecoderOptions,
        reopen: usize,
    ) -> Result<(Self, UnitRoot)> {
        let text: *mut str = Box::into_raw(text.into_boxed_str());
        // SAFETY: `text` is a live allocation that `UnitParser` owns, never changes, and frees
        // in `Drop` after the parser and everything else borrowing it (its lifetime is nominal:
        // nothing borrowed from it is handed out, see the module docs). On the error paths
        // below it is freed before returning.
        #[allow(unsafe_code)]
        let input: &'static str = unsafe { &*text };
        let free = || {
            // SAFETY: as above; nothing borrows the text once the parser is gone.
            #[allow(unsafe_code)]
            unsafe {
                drop(Box::from_raw(text));
            }
        };
        let opened = start(input, opts).and_then(|(mut p, header)| {
            let (pending, root) = p.root(header)?;
            Ok((p, header, pending, root))
        });
        let (mut p, header, pending, root) = match opened {
            Ok(opened) => opened,
            Err(e) => {
                free();
                return Err(e);
            }
        };
        let kind = match (&pending, root) {
            (Pending::Object { level: 0, .. }, Root::Object) => Some(UnitRoot::Object),
            (
                Pending::Array {
                    body: Body::Rows { shape, .. },
                    ..
                },
                Root::Array(_),
            ) if shape.as_deref().is_none_or(rows_stand_alone) => Some(UnitRoot::Table),
            (
                Pending::Array {
                    body: Body::Items { level: 0 },
                    ..
                },
                Root::Array(_),
            ) => Some(UnitRoot::Table),
            _ => None,
        };
        let entered = match &pending {
            Pending::Object { line, .. } if kind == Some(UnitRoot::Object) => {
                p.enter(line).and_then(|()| {
                    // The sections the unit re-enters.
                    for _ in 0..reopen {
                        if let Some(line) = p.lines.next()? {
                            p.enter(&line)?;
                        }
                    }
                    Ok(())
                })
            }
            _ => Ok(()),
        };
        let failed = match kind {
            None => Some(Error::new(
                ErrorKind::InvalidLine,
                "internal: a unit that is neither an object nor a table read in pieces",
            )),
            Some(_) => entered.err(),
        };
        let (Some(kind), None) = (kind, failed.as_ref()) else {
            drop(pending);
            drop(p);
            free();
            return Err(failed.unwrap_or_else(|| Error::new(ErrorKind::InvalidLine, "internal")));
        };
        let pending = (kind == UnitRoot::Table).then_some(pending);
        Ok((
            UnitParser {
                p: std::mem::ManuallyDrop::new(p),
                root,
                header,
                pending,
                table: None,
                entered: false,
                text,
            },
            kind,
        ))
    }

    /// The position of the unit's header line (where a root object's errors without one
    /// point).
    pub(crate) fn header_position(&self) -> Position {
        line_position(&self.header)
    }

    /// Whether a member of the root object follows in this unit (after reading past the
    /// value of the one before if the visitor skipped it): `false` where the unit's members
    /// end ([`ObjectAccess`]'s reading at level 0).
    ///
    /// The members of a section at `level` (0 for the root object): `false` also where a line
    /// of a lower level follows.
    pub(crate) fn at_member_in(&mut self, level: usize) -> Result<bool> {
        if let Some(pending) = self.pending.take() {
            // The visitor skipped a value: read past it.
            de::Deserializer::deserialize_ignored_any(
                ValueDe {
                    p: &mut self.p,
                    pending,
                },
                IgnoredAny,
            )?;
        }
        if !self.p.lines.has_next()? {
            return Ok(false);
        }
        let line = self.p.lines.peeked();
        let at = line.level()?;
        if at < level {
            return Ok(false);
        }
        if at > level {
            return Err(unexpected_indent(&line, level));
        }
        if header::is_metadata(&line) {
            if level == 0 {
                return Ok(false);
            }
            return Err(trailer_not_at_top(&line));
        }
        Ok(true)
    }

    /// Whether the value still to read is a section (`## key`, an object of member lines):
    /// its line's position, in the unit.
    pub(crate) fn pending_section(&self) -> Option<Position> {
        match &self.pending {
            Some(Pending::Object { line, .. }) => Some(line_position(line)),
            _ => None,
        }
    }

    /// Enters the section [`UnitParser::pending_section`] found: its members are read next.
    pub(crate) fn enter_section(&mut self) -> Result<()> {
        if let Some(Pending::Object { line, .. }) = self.pending.take() {
            self.p.enter(&line)?;
        }
        Ok(())
    }

    /// Leaves the section at `level`, when this unit entered it (a unit that starts past its
    /// end never did).
    pub(crate) fn leave_section(&mut self, level: usize) {
        if self.p.depth > level {
            self.p.leave();
        }
    }

    /// The key of the member [`UnitParser::at_member_in`] found, read into `seed`: `keys` and
    /// `found` are the members of the units before, which a repeated key and the element
    /// limit are checked against.
    ///
    /// A member of the root object (`level` 0) or of a section at `level`.
    pub(crate) fn key_in<K: DeserializeSeed<'static>>(
        &mut self,
        level: usize,
        seed: K,
        keys: &mut HashSet<String>,
        found: &mut u64,
    ) -> Result<K::Value> {
        let line = self.p.lines.peeked();
        let key = self.p.member(line, level, &mut self.pending)?;
        self.p.lines.advance();
        *found += 1;
        self.p.check_elements(&line, *found)?;
        if !keys.insert(key.as_ref().to_owned()) {
            return Err(duplicate_key(&line, &key));
        }
        seed.deserialize(KeyDe::of(&key))
            .map_err(|e| e.or_position(|| line_position(&line)))
    }

    /// Whether the member [`UnitParser::key_in`] read last still has its value to read.
    pub(crate) fn value_pending(&self) -> bool {
        self.pending.is_some()
    }

    /// The value of the member [`UnitParser::key_in`] read, into `seed`.
    pub(crate) fn value<V: DeserializeSeed<'static>>(&mut self, seed: V) -> Result<V::Value> {
        let pending = self.pending.take().ok_or_else(|| {
            Error::new(
                ErrorKind::TypeMismatch,
                "a value was requested before its key",
            )
        })?;
        seed.deserialize(ValueDe {
            p: &mut self.p,
            pending,
        })
    }

    /// In a later piece of a member table, reads the member's line again (its key was
    /// checked with the first piece).
    pub(crate) fn reopen_member(&mut self, level: usize) -> Result<()> {
        let Some(line) = self.p.lines.next()? else {
            return Ok(());
        };
        self.p.member(line, level, &mut self.pending)?;
        Ok(())
    }

    /// Starts reading the rows of the table (or the items of the list) the unit's root is,
    /// or the member [`key`] read last is: `found` rows were read in the pieces before. Gives
    /// the position of the count bracket (where the visitor's errors without one point).
    ///
    /// [`key`]: UnitParser::key_in
    pub(crate) fn start_rows(&mut self, found: u64) -> Result<Position> {
        let seq = match self.pending.take() {
            Some(Pending::Array {
                line,
                at,
                count,
                body:
                    Body::Rows {
                        fields,
                        level,
                        shape,
                    },
            }) => {
                self.p.enter(&line)?;
                let buffers = self.p.spare_rows.pop().unwrap_or_default();
                let shaped = self.p.shaped(shape);
                let mut table = Table::new(fields, shaped, level, count, line, at, buffers);
                table.found = found;
                Seq::Rows(table)
            }
            Some(Pending::Array {
                line,
                at,
                count,
                body: Body::Items { level },
            }) => {
                self.p.enter(&line)?;
                Seq::Items(Items {
                    line,
                    at,
                    count,
                    level,
                    found,
                })
            }
            _ => {
                return Err(Error::new(
                    ErrorKind::InvalidLine,
                    "internal: a table read in pieces without its rows",
                ))
            }
        };
        let at = match &seq {
            Seq::Rows(t) => t.line.position_of(t.at),
            Seq::Items(i) => i.line.position_of(i.at),
        };
        self.table = Some(seq);
        self.entered = true;
        Ok(at)
    }

    /// Runs `rows` on the table's rows, or `items` on the list's items.
    fn rows<R>(
        &mut self,
        rows: impl FnOnce(&mut RowSeq<'_, 'static>) -> Result<R>,
        items: impl FnOnce(&mut ItemSeq<'_, 'static>) -> Result<R>,
    ) -> Result<R> {
        match self.table.take() {
            Some(Seq::Rows(st)) => {
                let mut seq = RowSeq { p: &mut self.p, st };
                let out = rows(&mut seq);
                self.table = Some(Seq::Rows(seq.st));
                out
            }
            Some(Seq::Items(list)) => {
                let mut seq = ItemSeq {
                    p: &mut self.p,
                    line: list.line,
                    at: list.at,
                    count: list.count,
                    level: list.level,
                    found: list.found,
                };
                let out = items(&mut seq);
                self.table = Some(Seq::Items(Items {
                    found: seq.found,
                    ..list
                }));
                out
            }
            None => Err(Error::new(
                ErrorKind::InvalidLine,
                "internal: rows read without a table",
            )),
        }
    }

    /// The table's next row (or the list's next item) in this unit, into `seed`; `None` where
    /// the unit's rows end.
    pub(crate) fn row<T: DeserializeSeed<'static>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        if matches!(self.table, Some(Seq::Items(_))) {
            return self.rows(
                |_| Ok(None),
                |seq| de::SeqAccess::next_element_seed(seq, seed),
            );
        }
        self.rows(
            |seq| de::SeqAccess::next_element_seed(seq, seed),
            |_| Ok(None),
        )
    }

    /// The rows (or items) read so far, the pieces before included.
    pub(crate) fn rows_found(&self) -> u64 {
        match &self.table {
            Some(Seq::Rows(t)) => t.found,
            Some(Seq::Items(i)) => i.found,
            None => 0,
        }
    }

    /// Whether a row of the table (or an item of the list) follows in this unit, or the
    /// declared count is reached: what [`RowSeq::next_row_line`] (or
    /// [`ItemSeq::next_item_line`]) finds, read in place. A line those report an error for
    /// counts as one that follows: reading it reports the error.
    pub(crate) fn rows_left(&mut self) -> Result<bool> {
        let (count, found, level, items) = match &self.table {
            Some(Seq::Rows(t)) => (t.count, t.found, t.level, false),
            Some(Seq::Items(i)) => (i.count, i.found, i.level, true),
            None => return Ok(false),
        };
        if matches!(count, Count::Known(n) if found >= n) {
            return Ok(true);
        }
        if !self.p.lines.has_next()? {
            return Ok(false);
        }
        let line = self.p.lines.peeked();
        let Ok(at) = line.level() else {
            return Ok(true);
        };
        Ok(at > level
            || (at == level
                && if items {
                    line.text.starts_with('@')
                } else {
                    !line.text.starts_with("##")
                }))
    }

    /// After the last row or item: what [`RowSeq`] (or [`ItemSeq`]) checks at its end.
    pub(crate) fn end_rows(&mut self) -> Result<()> {
        self.rows(|seq| seq.end(), |seq| seq.end())?;
        if let Some(Seq::Rows(table)) = self.table.take() {
            self.p.recycle(table);
        }
        if self.entered {
            self.p.leave();
            self.entered = false;
        }
        Ok(())
    }

    /// The deferred `[?]` sections this unit found, at its own positions.
    pub(crate) fn take_deferred(&mut self) -> Vec<(Position, u64)> {
        std::mem::take(&mut self.p.deferred)
    }

    /// Whether the unit has a line its reading stopped before.
    pub(crate) fn has_next(&mut self) -> Result<bool> {
        self.p.lines.has_next()
    }

    /// Ends the payload: what follows the root is checked, with `deferred` (every unit's
    /// deferred sections, at the input's positions).
    pub(crate) fn finish(&mut self, deferred: Vec<(Position, u64)>) -> Result<()> {
        if self.root == Root::Object {
            self.p.leave();
        }
        self.p.deferred = deferred;
        self.p.finish(self.root)
    }
}

/// What [`UnitParser::row`] reads (one per unit parser: its size does not matter).
#[allow(clippy::large_enum_variant)]
enum Seq {
    Rows(Table<'static>),
    Items(Items),
}

/// The state of an [`ItemSeq`] between calls.
struct Items {
    line: Line<'static>,
    at: &'static str,
    count: Count,
    level: usize,
    found: u64,
}
