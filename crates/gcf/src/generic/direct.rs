//! The direct encoder: writes the GCF of a `Serialize` value while serde walks it, with no
//! tape in between.
//!
//! The buffered encoder must look ahead: a tabular array's field union, its inline object
//! schemas and shared array schemas all span every row. This module *guesses* them from the
//! first element instead — the columns of a table are the keys of row 0, a column whose row-0
//! object has three or more keys gets an inline schema, a column whose row-0 array is a flat
//! table shares its fields, an array is primitive or tabular as its first element is a scalar
//! or an object — and then checks every later element against the guess. Most real data
//! (uniform rows, records of the same type) confirms it, and is written in one pass.
//!
//! Whenever the input does anything the guess or this module does not cover (a row with a new
//! key or its keys in another order, mixed arrays, enum variants with data, a raw JSON value,
//! an error of any kind), [`write()`] gives up with an error and the caller encodes the value
//! again through the tape ([`super::tape`], [`super::encode`]), which decides every case — and
//! reports every error — exactly as before. The bytes are the same either way: the tests
//! compare both paths.

use std::collections::HashSet;
use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
use std::mem;

use serde::ser::{self, Impossible, Serialize};

use super::encode::{key_bit, key_eq, key_eq_bytes};
use super::key::KeyText;
use super::tape::NUMBER_TOKEN;
use crate::error::{Error, ErrorKind, Result};
use crate::lex::{self, indent, write_key};
use crate::number;
use crate::options::EncoderOptions;

/// Appends the GCF body of `value` to `out`, or fails if the direct path cannot be sure of
/// the bytes (the caller then truncates `out` and takes the tape path).
pub(crate) fn write<T: ?Sized + Serialize>(
    value: &T,
    opts: &EncoderOptions,
    out: &mut String,
) -> Result<()> {
    let mut direct = Direct {
        out: mem::take(out),
        opts,
        depth: 0,
        opened: 0,
        ctx: Ctx::Root,
        key_ranges: Vec::new(),
        arrays: Vec::new(),
        fields: String::new(),
        spare: Vec::new(),
    };
    let result = value.serialize(&mut direct);
    *out = direct.out;
    result
}

/// The direct path does not apply; the caller falls back to the tape. Never shown to users.
#[cold]
fn fallback() -> Error {
    Error::new(
        ErrorKind::UnsupportedValue,
        "internal: not encodable in one pass",
    )
}

/// A scalar to write.
#[derive(Debug, Clone, Copy)]
enum Leaf<'a> {
    Null,
    Bool(bool),
    U64(u64),
    I64(i64),
    F64(f64),
    F32(f32),
    /// A number lexeme (serde_json's arbitrary precision, 128-bit integers).
    Num(&'a str),
    Str(&'a str),
}

impl Leaf<'_> {
    /// Writes the scalar as every context has it (the same rules as `Encoder::scalar`).
    #[inline]
    fn write(self, out: &mut String) -> Result<()> {
        match self {
            Leaf::Null => out.push('-'),
            Leaf::Bool(true) => out.push_str("true"),
            Leaf::Bool(false) => out.push_str("false"),
            Leaf::U64(v) => number::write_u64(out, v),
            Leaf::I64(v) => number::write_i64(out, v),
            Leaf::F64(v) => number::write_f64(out, v)?,
            Leaf::F32(v) => number::write_f32(out, v)?,
            Leaf::Num(lexeme) => number::write_lexeme(out, lexeme)?,
            Leaf::Str(s) => lex::write_str(out, s),
        }
        Ok(())
    }
}

/// Where the next value goes.
#[derive(Debug, Clone, Copy)]
enum Ctx {
    Root,
    /// The value of the last key in `key_ranges`, a member of an object at `depth`.
    Member {
        depth: usize,
    },
    /// An element of the innermost array.
    Element,
    /// Column `c` of the current row of the innermost table.
    Cell(usize),
    /// A value of a positional inline body (into the innermost table's attachment buffer).
    Positional {
        first: bool,
    },
}

/// What an array's header starts with.
#[derive(Debug, Clone, Copy)]
enum Head {
    /// `## [N]`.
    Root,
    /// `## key [N]` or `key[N]: `; the key is `key_ranges[i]`.
    Member(usize),
    /// `@i [N]`.
    Item(usize),
    /// `.key [N]`: column `column` of the table of `arrays[outer]`.
    Attachment { outer: usize, column: usize },
}

/// The form chosen for an array by its first element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// No element yet.
    Unknown,
    Primitive,
    Table,
    Expanded,
}

/// What a table column holds beyond scalars, as row 0 established it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Scalars, or traditional attachments.
    Plain,
    /// An inline object schema: its keys are `schema_ranges[from..to]`.
    Inline { from: usize, to: usize },
    /// A shared array schema: its fields are `schema_ranges[from..to]`.
    Shared { from: usize, to: usize },
}

/// A tabular array being written.
#[derive(Debug, Default)]
struct Table {
    /// Column names (raw, unquoted): `names[ranges[c]]`.
    names: String,
    ranges: Vec<(usize, usize)>,
    kinds: Vec<Kind>,
    /// Inline and shared schemas of the columns.
    schemas: String,
    schema_ranges: Vec<(usize, usize)>,
    /// The cells of the current row written so far.
    next_col: usize,
    /// Where the current row's cells start in the output (after its indentation).
    row_start: usize,
    /// The current row has a nested cell (and so an `@r` prefix).
    nested: bool,
    /// No row so far has had a nested cell.
    flat: bool,
    /// Where row 0's `{fields}` go in the header line.
    header_at: usize,
    /// The attachments of the current row, written after its line.
    attach: String,
    /// Headerless rows of a shared array schema (a later row's attachment).
    shared: bool,
    /// For `shared`: how many schema fields some row has had so far (the fields must first
    /// appear in schema order for the array's field union to equal the schema).
    union: usize,
}

impl Table {
    fn reset(&mut self) {
        self.names.clear();
        self.ranges.clear();
        self.kinds.clear();
        self.schemas.clear();
        self.schema_ranges.clear();
        self.next_col = 0;
        self.row_start = 0;
        self.nested = false;
        self.flat = true;
        self.header_at = 0;
        self.attach.clear();
        self.shared = false;
        self.union = 0;
    }

    fn name(&self, c: usize) -> &str {
        let (from, to) = self.ranges[c];
        &self.names[from..to]
    }

    fn add_column(&mut self, name: &str) {
        let from = self.names.len();
        self.names.push_str(name);
        self.ranges.push((from, self.names.len()));
        self.kinds.push(Kind::Plain);
    }

    fn schema(&self, i: usize) -> &str {
        let (from, to) = self.schema_ranges[i];
        &self.schemas[from..to]
    }

    /// Writes the separator and `~` cells up to column `c`, which the current row fills next.
    #[inline]
    fn skip_to(&mut self, out: &mut String, c: usize) {
        for j in self.next_col..c {
            if j > 0 {
                out.push('|');
            }
            out.push('~');
        }
        if c > 0 {
            out.push('|');
        }
        self.next_col = c + 1;
    }
}

/// An array being written.
#[derive(Debug)]
struct Array {
    head: Head,
    /// The header's indentation and the body's.
    depth: usize,
    body: usize,
    /// The declared length and the elements so far.
    len: usize,
    count: usize,
    form: Form,
    /// The array is the attachment of a row: on its end, the output switches back to the row.
    attached: bool,
    /// The array is row 0's attachment in this column of the outer table, which gets a shared
    /// schema if this array qualifies.
    report: Option<usize>,
    /// Boxed: arrays are pushed and popped often, and a table is large.
    table: Box<Table>,
}

struct Direct<'o> {
    /// The current output: the payload, or a row's attachment buffer swapped in.
    out: String,
    opts: &'o EncoderOptions,
    /// Open containers (for `max_depth`) and containers opened so far.
    depth: usize,
    opened: usize,
    ctx: Ctx,
    /// Where the keys of the open objects are in the output (written, as the duplicate check
    /// reads them; the output moves only after them while they are open).
    key_ranges: Vec<(usize, usize)>,
    arrays: Vec<Array>,
    /// A table's `{fields}`, written once its row 0 ends (kept for its allocation).
    fields: String,
    /// Tables no longer in use, kept for their allocations.
    /// Boxed: they move into and out of `arrays` as boxes.
    #[allow(clippy::vec_box)]
    spare: Vec<Box<Table>>,
}

/// Marks the current row of the innermost table as holding a nested cell: `@r ` before its
/// cells. Rows of a shared schema hold only scalars.
fn nest<'a>(out: &mut String, arrays: &'a mut [Array]) -> Result<&'a mut Array> {
    let array = arrays.last_mut().ok_or_else(fallback)?;
    let table = &mut array.table;
    if table.shared {
        return Err(fallback());
    }
    table.flat = false;
    if !table.nested {
        table.nested = true;
        let mut id = itoa::Buffer::new();
        let id = id.format(array.count);
        let mut prefix = [b' '; 24];
        prefix[0] = b'@';
        prefix[1..=id.len()].copy_from_slice(id.as_bytes());
        // ASCII digits between `@` and a space.
        let prefix = std::str::from_utf8(&prefix[..id.len() + 2]).unwrap_or("@ ");
        out.insert_str(table.row_start, prefix);
    }
    Ok(array)
}

/// Writes an object member's indentation and key; returns where the key is and the Bloom
/// bit of the written key.
#[inline]
fn write_member_key(out: &mut String, depth: usize, key: &str) -> ((usize, usize), u64) {
    indent(out, depth);
    let from = out.len();
    write_key(out, key);
    let to = out.len();
    ((from, to), key_bit(&out[from..to]))
}

/// Puts `## ` before the last key written (at the end of `out`), and moves its range.
fn prefix_key(out: &mut String, range: &mut (usize, usize)) {
    out.insert_str(range.0, "## ");
    range.0 += 3;
    range.1 += 3;
}

impl Direct<'_> {
    /// A key of an open object, as written.
    fn key(&self, i: usize) -> &str {
        let (from, to) = self.key_ranges[i];
        &self.out[from..to]
    }

    /// Opens a container: the depth limit (the tape reports it) and the count of containers.
    fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        self.opened += 1;
        if self.depth > self.opts.max_depth {
            return Err(fallback());
        }
        Ok(())
    }

    /// The innermost table (rows and cells exist only inside an array).
    fn table(&mut self) -> Result<&mut Table> {
        match self.arrays.last_mut() {
            Some(array) => Ok(&mut array.table),
            None => Err(fallback()),
        }
    }

    /// Writes a scalar where the context says.
    #[inline]
    fn leaf(&mut self, v: Leaf<'_>) -> Result<()> {
        match self.ctx {
            // The common cases first: a cell of a later row in a scalar column, a value of
            // an inline object.
            Ctx::Cell(c) => {
                if let Some(array) = self.arrays.last() {
                    if array.count > 0 && array.table.kinds.get(c) == Some(&Kind::Plain) {
                        return v.write(&mut self.out);
                    }
                }
            }
            Ctx::Positional { first } => {
                if let Some(array) = self.arrays.last_mut() {
                    let attach = &mut array.table.attach;
                    if !first {
                        attach.push('|');
                    }
                    return v.write(attach);
                }
            }
            Ctx::Member { .. } => {
                // The indentation and the key are written.
                self.out.push('=');
                v.write(&mut self.out)?;
                self.out.push('\n');
                return Ok(());
            }
            Ctx::Element => {
                if let Some(array) = self.arrays.last() {
                    if array.form == Form::Primitive {
                        self.out.push(',');
                        return v.write(&mut self.out);
                    }
                }
            }
            Ctx::Root => {}
        }
        self.leaf_slow(v)
    }

    /// [`Direct::leaf`] in every case.
    #[inline(never)]
    fn leaf_slow(&mut self, v: Leaf<'_>) -> Result<()> {
        match self.ctx {
            Ctx::Root => {
                self.out.push('=');
                v.write(&mut self.out)?;
                self.out.push('\n');
            }
            Ctx::Member { .. } => {
                // The indentation and the key are written.
                self.out.push('=');
                v.write(&mut self.out)?;
                self.out.push('\n');
            }
            Ctx::Element => {
                let i = self.arrays.len() - 1;
                match self.arrays[i].form {
                    // A shared schema needs a table.
                    Form::Unknown if self.arrays[i].table.shared => return Err(fallback()),
                    Form::Unknown => {
                        self.arrays[i].form = Form::Primitive;
                        self.header(i);
                        v.write(&mut self.out)?;
                    }
                    Form::Primitive => {
                        self.out.push(',');
                        v.write(&mut self.out)?;
                    }
                    Form::Expanded => {
                        let array = &self.arrays[i];
                        indent(&mut self.out, array.body);
                        self.out.push('@');
                        number::write_u64(&mut self.out, array.count as u64);
                        self.out.push_str(" =");
                        v.write(&mut self.out)?;
                        self.out.push('\n');
                    }
                    Form::Table => return Err(fallback()),
                }
            }
            Ctx::Cell(c) => {
                let array = self.arrays.last().ok_or_else(fallback)?;
                // A column of objects or arrays holds nothing else but null (else the tape
                // drops the schema).
                if array.count > 0
                    && array.table.kinds[c] != Kind::Plain
                    && !matches!(v, Leaf::Null)
                {
                    return Err(fallback());
                }
                v.write(&mut self.out)?;
            }
            Ctx::Positional { first } => {
                let attach = &mut self.table()?.attach;
                if !first {
                    attach.push('|');
                }
                v.write(attach)?;
            }
        }
        Ok(())
    }

    /// Writes the header of `arrays[i]` once its form is known.
    fn header(&mut self, i: usize) {
        let Direct {
            out,
            arrays,
            key_ranges,
            ..
        } = self;
        let array = &arrays[i];
        let (form, shared) = (array.form, array.table.shared);
        if !matches!(array.head, Head::Member(_)) {
            indent(out, array.depth);
        }
        match array.head {
            // The indentation and the key are written, and nothing after them.
            Head::Member(_) if form == Form::Primitive => {}
            Head::Root => out.push_str("## "),
            Head::Member(k) => {
                prefix_key(out, &mut key_ranges[k]);
                out.push(' ');
            }
            Head::Item(n) => {
                out.push('@');
                number::write_u64(out, n as u64);
                out.push(' ');
            }
            Head::Attachment { outer, column } => {
                out.push('.');
                write_key(out, arrays[outer].table.name(column));
                out.push(' ');
            }
        }
        out.push('[');
        number::write_u64(out, array.len as u64);
        out.push(']');
        match form {
            Form::Primitive => out.push_str(": "),
            Form::Table if !shared => {
                arrays[i].table.header_at = out.len();
                out.push('\n');
            }
            _ => out.push('\n'),
        }
    }

    /// Opens an object where the context says.
    fn open_object(&mut self, len: Option<usize>) -> Result<Mode> {
        self.enter()?;
        let mode = match mem::replace(&mut self.ctx, Ctx::Element) {
            Ctx::Root => self.members(0),
            Ctx::Member { depth } => {
                // The indentation and the key are written, and nothing after them.
                if let Some(range) = self.key_ranges.last_mut() {
                    prefix_key(&mut self.out, range);
                }
                self.out.push('\n');
                self.members(depth + 1)
            }
            Ctx::Element => {
                let i = self.arrays.len() - 1;
                match self.arrays[i].form {
                    Form::Unknown => {
                        self.arrays[i].form = Form::Table;
                        self.header(i);
                        self.start_row()?
                    }
                    Form::Table => self.start_row()?,
                    Form::Expanded => {
                        let array = &self.arrays[i];
                        let body = array.body;
                        indent(&mut self.out, body);
                        self.out.push('@');
                        number::write_u64(&mut self.out, array.count as u64);
                        self.out.push_str(" {}\n");
                        self.members(body + 1)
                    }
                    Form::Primitive => return Err(fallback()),
                }
            }
            Ctx::Cell(c) => {
                let inline_schemas = self.opts.inline_schemas;
                let opened = self.opened;
                let keys_from = self.key_ranges.len();
                let out = &mut self.out;
                let array = nest(out, &mut self.arrays)?;
                let row = array.count;
                let body = array.body;
                let table = &mut array.table;
                match table.kinds[c] {
                    Kind::Inline { from, to } if row > 0 => {
                        out.push('^');
                        indent(&mut table.attach, body);
                        Mode::Inline {
                            from,
                            next: from,
                            to,
                        }
                    }
                    Kind::Plain if row == 0 && inline_schemas && len.is_some_and(|n| n >= 3) => {
                        out.push_str("^{");
                        indent(&mut table.attach, body);
                        Mode::InlineFirst {
                            column: c,
                            from: table.schema_ranges.len(),
                        }
                    }
                    Kind::Plain => {
                        out.push('^');
                        mem::swap(out, &mut table.attach);
                        indent(out, body);
                        out.push('.');
                        write_key(out, table.name(c));
                        out.push_str(" {}\n");
                        let check_inline = row == 0 && inline_schemas;
                        Mode::Members {
                            depth: body + 2,
                            keys_from,
                            seen: 0,
                            big: None,
                            attached: true,
                            check_inline: check_inline.then_some(opened),
                        }
                    }
                    _ => return Err(fallback()),
                }
            }
            Ctx::Positional { .. } => return Err(fallback()),
        };
        Ok(mode)
    }

    fn members(&self, depth: usize) -> Mode {
        Mode::Members {
            depth,
            keys_from: self.key_ranges.len(),
            seen: 0,
            big: None,
            attached: false,
            check_inline: None,
        }
    }

    fn start_row(&mut self) -> Result<Mode> {
        let array = self.arrays.last_mut().ok_or_else(fallback)?;
        indent(&mut self.out, array.body);
        let table = &mut array.table;
        table.row_start = self.out.len();
        table.next_col = 0;
        table.nested = false;
        Ok(Mode::Row)
    }

    /// Opens an array where the context says.
    fn open_array(&mut self, len: Option<usize>) -> Result<()> {
        let len = len.ok_or_else(fallback)?;
        self.enter()?;
        let mut table = self.spare.pop().unwrap_or_default();
        table.reset();
        let (head, depth, body, attached, report) = match mem::replace(&mut self.ctx, Ctx::Element)
        {
            Ctx::Root => (Head::Root, 0, 0, false, None),
            Ctx::Member { depth } => (
                Head::Member(self.key_ranges.len() - 1),
                depth,
                depth,
                false,
                None,
            ),
            Ctx::Element => {
                let i = self.arrays.len() - 1;
                match self.arrays[i].form {
                    Form::Unknown if self.arrays[i].table.shared => return Err(fallback()),
                    Form::Unknown => {
                        self.arrays[i].form = Form::Expanded;
                        self.header(i);
                    }
                    Form::Expanded => {}
                    _ => return Err(fallback()),
                }
                let array = &self.arrays[i];
                (
                    Head::Item(array.count),
                    array.body,
                    array.body + 1,
                    false,
                    None,
                )
            }
            Ctx::Cell(c) => {
                let shared_schemas = self.opts.shared_schemas;
                let outer = self.arrays.len() - 1;
                let out = &mut self.out;
                let array = nest(out, &mut self.arrays)?;
                let row = array.count;
                let body = array.body;
                let outer_table = &mut array.table;
                let report = match outer_table.kinds[c] {
                    Kind::Shared { from, to } if row > 0 => {
                        // Later rows: headerless rows in the schema's fields.
                        table.shared = true;
                        for i in from..to {
                            table.add_column(outer_table.schema(i));
                        }
                        None
                    }
                    Kind::Plain => (row == 0 && shared_schemas).then_some(c),
                    _ => return Err(fallback()),
                };
                out.push('^');
                mem::swap(out, &mut outer_table.attach);
                (
                    Head::Attachment { outer, column: c },
                    body,
                    body + 2,
                    true,
                    report,
                )
            }
            Ctx::Positional { .. } => return Err(fallback()),
        };
        self.arrays.push(Array {
            head,
            depth,
            body,
            len,
            count: 0,
            form: Form::Unknown,
            attached,
            report,
            table,
        });
        Ok(())
    }

    fn close_array(&mut self) -> Result<()> {
        let i = self.arrays.len() - 1;
        let array = &self.arrays[i];
        if array.count != array.len {
            return Err(fallback());
        }
        match array.form {
            Form::Unknown => {
                if array.table.shared {
                    // An empty array has no field union: the tape drops the shared schema.
                    return Err(fallback());
                }
                self.header(i);
            }
            Form::Primitive => self.out.push('\n'),
            Form::Table => {
                if array.table.shared && array.table.union != array.table.ranges.len() {
                    return Err(fallback());
                }
            }
            Form::Expanded => {}
        }
        let Some(array) = self.arrays.pop() else {
            return Err(fallback());
        };
        self.depth -= 1;
        if array.attached {
            let outer = &mut self.arrays.last_mut().ok_or_else(fallback)?.table;
            mem::swap(&mut self.out, &mut outer.attach);
        }
        if let Some(c) = array.report {
            // Row 0's array decides the column's shared schema: a table of scalar rows.
            if array.form == Form::Table && array.table.flat {
                let outer = self.table()?;
                let from = outer.schema_ranges.len();
                for k in 0..array.table.ranges.len() {
                    let start = outer.schemas.len();
                    outer.schemas.push_str(array.table.name(k));
                    outer.schema_ranges.push((start, outer.schemas.len()));
                }
                outer.kinds[c] = Kind::Shared {
                    from,
                    to: outer.schema_ranges.len(),
                };
            }
        }
        if self.spare.len() < 16 {
            self.spare.push(array.table);
        }
        Ok(())
    }
}

/// What an open object is.
#[derive(Debug)]
enum Mode {
    /// `key=value` members at `depth`; its keys start at `key_ranges[keys_from]`.
    Members {
        depth: usize,
        keys_from: usize,
        /// A one-word Bloom filter of the keys (see [`key_bit`]): a key whose bit is clear
        /// is new, without comparing it to the others.
        seen: u64,
        /// Hashes of the keys, once the object is too large for pairwise checks.
        /// (Boxed: an open object is moved around as a serde compound, and most are small.)
        big: Option<HashSet<u64, BuildHasherDefault<DefaultHasher>>>,
        /// A row attachment `.key {}`: on its end the output switches back to the row.
        attached: bool,
        /// Row 0's object in a column that could take an inline schema; the value of
        /// `opened` after this object opened (to tell whether it held containers).
        check_inline: Option<usize>,
    },
    /// A row of the innermost table.
    Row,
    /// Row 0's object in column `column`, guessed to take an inline schema: keys into the
    /// `^{...}` marker, values into the positional body. Its keys start at
    /// `schema_ranges[from]`.
    InlineFirst { column: usize, from: usize },
    /// A later row's object in an inline-schema column with the keys `schema_ranges[from..to]`,
    /// of which `next..to` are still expected.
    Inline { from: usize, next: usize, to: usize },
    /// serde_json's arbitrary-precision number.
    Number,
}

/// An object being written.
pub(super) struct Obj<'a, 'o> {
    d: &'a mut Direct<'o>,
    mode: Mode,
}

/// Objects larger than this check duplicate keys by hash.
const PAIRWISE_MAX: usize = 16;

impl Obj<'_, '_> {
    /// Takes the next key.
    #[inline]
    fn key(&mut self, key: &str) -> Result<()> {
        // The common cases first: a later row with the next column's key, a later row's
        // object with the next key of its inline schema.
        let Direct {
            out,
            arrays,
            ctx,
            key_ranges,
            ..
        } = &mut *self.d;
        match &mut self.mode {
            Mode::Row => {
                if let Some(array) = arrays.last_mut() {
                    let table = &mut array.table;
                    let c = table.next_col;
                    if array.count > 0 || table.shared {
                        if let Some(&(from, to)) = table.ranges.get(c) {
                            if key_eq_bytes(&table.names.as_bytes()[from..to], key.as_bytes())
                                && (!table.shared || c <= table.union)
                            {
                                if table.shared && c == table.union {
                                    table.union += 1;
                                }
                                if c > 0 {
                                    out.push('|');
                                }
                                table.next_col = c + 1;
                                *ctx = Ctx::Cell(c);
                                return Ok(());
                            }
                        }
                    }
                }
            }
            Mode::Members {
                depth,
                keys_from,
                seen,
                big: None,
                ..
            } if key_ranges.len() - *keys_from < PAIRWISE_MAX => {
                // A small object (pairwise checks) and a key unlike the others by the Bloom
                // filter; the rest (after undoing the write) as in `key_slow`.
                let start = out.len();
                let (range, bit) = write_member_key(out, *depth, key);
                if *seen & bit == 0 {
                    *seen |= bit;
                    key_ranges.push(range);
                    *ctx = Ctx::Member { depth: *depth };
                    return Ok(());
                }
                out.truncate(start);
            }
            Mode::Inline { from, next, to } if *next < *to => {
                if let Some(array) = arrays.last_mut() {
                    let table = &array.table;
                    if let Some(&(start, end)) = table.schema_ranges.get(*next) {
                        if key_eq_bytes(&table.schemas.as_bytes()[start..end], key.as_bytes()) {
                            *ctx = Ctx::Positional {
                                first: *next == *from,
                            };
                            *next += 1;
                            return Ok(());
                        }
                    }
                }
            }
            _ => {}
        }
        self.key_slow(key)
    }

    /// [`Obj::key`] in every case.
    #[inline(never)]
    fn key_slow(&mut self, key: &str) -> Result<()> {
        let d = &mut *self.d;
        match &mut self.mode {
            Mode::Members {
                depth,
                keys_from,
                seen,
                big,
                ..
            } => {
                // The key goes out at once (`key=value`, `## key`, `key[N]: ` or `## key [N]`
                // all start with it); the duplicate check compares the written keys, which are
                // equal just when the keys are.
                let ((from, to), _) = write_member_key(&mut d.out, *depth, key);
                let key = &d.out[from..to];
                let n = d.key_ranges.len() - *keys_from;
                let bit = key_bit(key);
                let maybe_seen = *seen & bit != 0;
                *seen |= bit;
                if n < PAIRWISE_MAX {
                    if maybe_seen && (*keys_from..d.key_ranges.len()).any(|k| key_eq(d.key(k), key))
                    {
                        return Err(fallback());
                    }
                } else {
                    let hashes = big.get_or_insert_with(|| {
                        (*keys_from..d.key_ranges.len())
                            .map(|k| hash(d.key(k)))
                            .collect()
                    });
                    if !hashes.insert(hash(key))
                        && (*keys_from..d.key_ranges.len()).any(|k| d.key(k) == key)
                    {
                        return Err(fallback());
                    }
                }
                d.key_ranges.push((from, to));
                d.ctx = Ctx::Member { depth: *depth };
            }
            Mode::Row => {
                let Direct { out, arrays, .. } = d;
                let array = arrays.last_mut().ok_or_else(fallback)?;
                let table = &mut array.table;
                let c = if array.count == 0 && !table.shared {
                    // Row 0 declares the columns.
                    if table
                        .ranges
                        .iter()
                        .any(|&(f, t)| key_eq(&table.names[f..t], key))
                    {
                        return Err(fallback());
                    }
                    table.add_column(key);
                    table.ranges.len() - 1
                } else {
                    let from = table.next_col;
                    let found = (from..table.ranges.len()).find(|&c| key_eq(table.name(c), key));
                    let Some(c) = found else {
                        // A new key, a repeated one, or keys out of order.
                        return Err(fallback());
                    };
                    if table.shared {
                        // The array's own field union must come out as the schema.
                        if c > table.union {
                            return Err(fallback());
                        }
                        if c == table.union {
                            table.union += 1;
                        }
                    }
                    c
                };
                table.skip_to(out, c);
                d.ctx = Ctx::Cell(c);
            }
            Mode::InlineFirst { from, .. } => {
                let table = d.table()?;
                let seen = table.schema_ranges.len() - *from;
                if (*from..table.schema_ranges.len()).any(|i| key_eq(table.schema(i), key)) {
                    return Err(fallback());
                }
                let start = table.schemas.len();
                table.schemas.push_str(key);
                table.schema_ranges.push((start, table.schemas.len()));
                if seen > 0 {
                    d.out.push(',');
                }
                write_key(&mut d.out, key);
                d.ctx = Ctx::Positional { first: seen == 0 };
            }
            Mode::Inline { from, next, to } => {
                let table = d.table()?;
                if *next >= *to || !key_eq(table.schema(*next), key) {
                    return Err(fallback());
                }
                d.ctx = Ctx::Positional {
                    first: *next == *from,
                };
                *next += 1;
            }
            Mode::Number => return Err(fallback()),
        }
        Ok(())
    }

    fn value<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        value.serialize(&mut *self.d)
    }

    /// Reads a map key as text and takes it.
    fn map_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<()> {
        key.serialize(KeyText {
            take: |text: &str| self.key(text),
        })
    }

    /// Closes the object.
    #[inline]
    fn end(self) -> Result<()> {
        // The common cases first: a later row with every column and no attachment, an
        // object of members that is nobody's attachment.
        match &self.mode {
            Mode::Row => {
                if let Some(array) = self.d.arrays.last() {
                    let table = &array.table;
                    if array.count > 0
                        && table.next_col == table.ranges.len()
                        && table.attach.is_empty()
                    {
                        self.d.out.push('\n');
                        self.d.depth -= 1;
                        return Ok(());
                    }
                }
            }
            Mode::Members {
                keys_from,
                attached: false,
                check_inline: None,
                ..
            } => {
                self.d.key_ranges.truncate(*keys_from);
                self.d.depth -= 1;
                return Ok(());
            }
            _ => {}
        }
        self.end_slow()
    }

    /// [`Obj::end`] in every case.
    #[inline(never)]
    fn end_slow(self) -> Result<()> {
        let d = self.d;
        match self.mode {
            Mode::Members {
                keys_from,
                attached,
                check_inline,
                ..
            } => {
                let n = d.key_ranges.len() - keys_from;
                d.key_ranges.truncate(keys_from);
                if let Some(opened) = check_inline {
                    // Row 0's object with three or more scalar members takes an inline schema
                    // (its size hint said otherwise).
                    if n >= 3 && d.opened == opened {
                        return Err(fallback());
                    }
                }
                if attached {
                    let Direct { out, arrays, .. } = d;
                    let table = &mut arrays.last_mut().ok_or_else(fallback)?.table;
                    mem::swap(out, &mut table.attach);
                }
            }
            Mode::Row => {
                let Direct {
                    out,
                    arrays,
                    fields,
                    ..
                } = d;
                let array = arrays.last_mut().ok_or_else(fallback)?;
                let table = &mut array.table;
                let n = table.ranges.len();
                for j in table.next_col..n {
                    if j > 0 {
                        out.push('|');
                    }
                    out.push('~');
                }
                if array.count == 0 && !table.shared {
                    if n == 0 {
                        // Only empty objects: expanded `@i {}` items.
                        return Err(fallback());
                    }
                    fields.clear();
                    fields.push('{');
                    for c in 0..n {
                        if c > 0 {
                            fields.push(',');
                        }
                        write_key(fields, table.name(c));
                    }
                    fields.push('}');
                    out.insert_str(table.header_at, fields);
                }
                out.push('\n');
                if !table.attach.is_empty() {
                    out.push_str(&table.attach);
                    table.attach.clear();
                }
            }
            Mode::InlineFirst { column, from } => {
                let table = d.table()?;
                let to = table.schema_ranges.len();
                if to - from < 3 {
                    return Err(fallback());
                }
                table.kinds[column] = Kind::Inline { from, to };
                table.attach.push('\n');
                d.out.push('}');
            }
            Mode::Inline { next, to, .. } => {
                if next != to {
                    return Err(fallback());
                }
                d.table()?.attach.push('\n');
            }
            Mode::Number => return Ok(()),
        }
        d.depth -= 1;
        Ok(())
    }
}

fn hash(key: &str) -> u64 {
    BuildHasherDefault::<DefaultHasher>::default().hash_one(key)
}

impl ser::SerializeMap for Obj<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<()> {
        self.map_key(key)
    }

    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.value(value)
    }

    fn end(self) -> Result<()> {
        Obj::end(self)
    }
}

impl ser::SerializeStruct for Obj<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        if let Mode::Number = self.mode {
            // The lexeme of an arbitrary-precision number.
            let d = &mut *self.d;
            return value.serialize(KeyText {
                take: |text: &str| d.leaf(Leaf::Num(text)),
            });
        }
        self.key(key)?;
        self.value(value)
    }

    fn end(self) -> Result<()> {
        Obj::end(self)
    }
}

/// An array being written (its state is the innermost of `Direct::arrays`).
pub(super) struct Seq<'a, 'o> {
    d: &'a mut Direct<'o>,
}

impl ser::SerializeSeq for Seq<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.d.ctx = Ctx::Element;
        value.serialize(&mut *self.d)?;
        match self.d.arrays.last_mut() {
            Some(array) => array.count += 1,
            None => return Err(fallback()),
        }
        Ok(())
    }

    fn end(self) -> Result<()> {
        self.d.close_array()
    }
}

impl ser::SerializeTuple for Seq<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        ser::SerializeSeq::serialize_element(self, value)
    }

    fn end(self) -> Result<()> {
        self.d.close_array()
    }
}

impl ser::SerializeTupleStruct for Seq<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        ser::SerializeSeq::serialize_element(self, value)
    }

    fn end(self) -> Result<()> {
        self.d.close_array()
    }
}

impl<'a, 'o> ser::Serializer for &'a mut Direct<'o> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Seq<'a, 'o>;
    type SerializeTuple = Seq<'a, 'o>;
    type SerializeTupleStruct = Seq<'a, 'o>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Obj<'a, 'o>;
    type SerializeStruct = Obj<'a, 'o>;
    type SerializeStructVariant = Impossible<(), Error>;

    fn serialize_bool(self, v: bool) -> Result<()> {
        self.leaf(Leaf::Bool(v))
    }

    fn serialize_i8(self, v: i8) -> Result<()> {
        self.leaf(Leaf::I64(i64::from(v)))
    }

    fn serialize_i16(self, v: i16) -> Result<()> {
        self.leaf(Leaf::I64(i64::from(v)))
    }

    fn serialize_i32(self, v: i32) -> Result<()> {
        self.leaf(Leaf::I64(i64::from(v)))
    }

    fn serialize_i64(self, v: i64) -> Result<()> {
        self.leaf(Leaf::I64(v))
    }

    fn serialize_i128(self, v: i128) -> Result<()> {
        match i64::try_from(v) {
            Ok(v) => self.leaf(Leaf::I64(v)),
            Err(_) => self.leaf(Leaf::Num(itoa::Buffer::new().format(v))),
        }
    }

    fn serialize_u8(self, v: u8) -> Result<()> {
        self.leaf(Leaf::U64(u64::from(v)))
    }

    fn serialize_u16(self, v: u16) -> Result<()> {
        self.leaf(Leaf::U64(u64::from(v)))
    }

    fn serialize_u32(self, v: u32) -> Result<()> {
        self.leaf(Leaf::U64(u64::from(v)))
    }

    fn serialize_u64(self, v: u64) -> Result<()> {
        self.leaf(Leaf::U64(v))
    }

    fn serialize_u128(self, v: u128) -> Result<()> {
        match u64::try_from(v) {
            Ok(v) => self.leaf(Leaf::U64(v)),
            Err(_) => self.leaf(Leaf::Num(itoa::Buffer::new().format(v))),
        }
    }

    fn serialize_f32(self, v: f32) -> Result<()> {
        self.leaf(Leaf::F32(v))
    }

    fn serialize_f64(self, v: f64) -> Result<()> {
        self.leaf(Leaf::F64(v))
    }

    fn serialize_char(self, v: char) -> Result<()> {
        self.leaf(Leaf::Str(v.encode_utf8(&mut [0; 4])))
    }

    fn serialize_str(self, v: &str) -> Result<()> {
        self.leaf(Leaf::Str(v))
    }

    fn serialize_bytes(self, _v: &[u8]) -> Result<()> {
        Err(fallback())
    }

    fn serialize_none(self) -> Result<()> {
        self.leaf(Leaf::Null)
    }

    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<()> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<()> {
        self.leaf(Leaf::Null)
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<()> {
        self.leaf(Leaf::Null)
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<()> {
        self.leaf(Leaf::Str(variant))
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<()> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<()> {
        Err(fallback())
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<Seq<'a, 'o>> {
        self.open_array(len)?;
        Ok(Seq { d: self })
    }

    fn serialize_tuple(self, len: usize) -> Result<Seq<'a, 'o>> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Seq<'a, 'o>> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant> {
        Err(fallback())
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Obj<'a, 'o>> {
        let mode = self.open_object(len)?;
        Ok(Obj { d: self, mode })
    }

    fn serialize_struct(self, name: &'static str, len: usize) -> Result<Obj<'a, 'o>> {
        if name == NUMBER_TOKEN {
            return Ok(Obj {
                d: self,
                mode: Mode::Number,
            });
        }
        if name.starts_with("$serde_json::private::") {
            // A raw JSON value: parsed by the tape.
            return Err(fallback());
        }
        let mode = self.open_object(Some(len))?;
        Ok(Obj { d: self, mode })
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant> {
        Err(fallback())
    }
}

#[cfg(test)]
mod tests {
    use serde::ser::{SerializeMap, Serializer};
    use serde_json::{json, Value};

    use super::*;

    /// A map that may repeat keys (serde_json's own maps cannot).
    struct Entries(Vec<(String, Value)>);

    impl Serialize for Entries {
        fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
            let mut map = serializer.serialize_map(Some(self.0.len()))?;
            for (k, v) in &self.0 {
                map.serialize_entry(k, v)?;
            }
            map.end()
        }
    }

    fn direct(value: &impl Serialize) -> Result<String> {
        let mut out = String::new();
        write(value, &EncoderOptions::new(), &mut out).map(|()| out)
    }

    fn entries(keys: &[&str], value: &Value) -> Entries {
        Entries(
            keys.iter()
                .map(|k| (k.to_string(), value.clone()))
                .collect(),
        )
    }

    #[test]
    fn every_repeated_key_gives_up() {
        let values = [
            json!(1),
            json!({"x": 1}),
            json!([1, 2]),
            json!([{"x": 1}]),
            json!([]),
        ];
        let mut many: Vec<String> = (0..40).map(|i| format!("k{i}")).collect();
        many.push("k7".into());
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let lists: [&[&str]; 5] = [
            &["a", "b", "a"],
            &["a b", "x", "a b"],
            &["", "y", ""],
            &["same", "same"],
            &many,
        ];
        for keys in lists {
            for v in &values {
                let map = entries(keys, v);
                assert!(direct(&map).is_err(), "{keys:?} of {v}");
                // Under a member, and as a table cell's attachment.
                let member = Entries(vec![("m".into(), json!(0)), ("o".into(), json!(null))]);
                assert!(direct(&member).is_ok());
                let inner =
                    serde_json::to_value(Entries(vec![("z".into(), json!(1))])).expect("a map");
                assert!(direct(&vec![inner]).is_ok());
                struct Nested<'a>(&'a Entries);
                impl Serialize for Nested<'_> {
                    fn serialize<S: Serializer>(
                        &self,
                        serializer: S,
                    ) -> std::result::Result<S::Ok, S::Error> {
                        let mut map = serializer.serialize_map(Some(2))?;
                        map.serialize_entry("id", &1)?;
                        map.serialize_entry("inner", self.0)?;
                        map.end()
                    }
                }
                assert!(direct(&Nested(&map)).is_err(), "{keys:?} of {v}");
                assert!(direct(&[Nested(&map)]).is_err(), "{keys:?} of {v}");
            }
        }
        // Distinct keys that share a Bloom bit are no duplicates.
        let distinct: Vec<String> = (0..15).map(|i| format!("k{i:02}")).collect();
        let distinct: Vec<&str> = distinct.iter().map(String::as_str).collect();
        for v in &values {
            let out = direct(&entries(&distinct, v)).expect("no duplicates");
            let expected = EncoderOptions::new()
                .to_string_through_tape(&entries(&distinct, v))
                .expect("the tape agrees");
            assert_eq!(format!("{}{out}", super::super::HEADER), expected);
        }
    }
}
