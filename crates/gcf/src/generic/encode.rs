//! The buffered generic-profile encoder (spec §7).
//!
//! ```text
//!  serde_json::Value ──────────────────┐  (read in place)
//!                                      ├─> Node (view.rs) ─> planner (plan.rs) ─> writer (here) ─> Out
//!  T: Serialize ──> Tape (tape.rs) ────┘                        │    ▲
//!                                                               ▼    │ candidate encodings
//!                                              fewest tokens (fewest.rs, with a TokenCounter)
//! ```
//!
//! Both inputs are read through one view, [`Node`]; the planner decides every layout (the
//! form of each array and object, and how each field of a table is written) by the rules of
//! the version the options name, or by counting tokens; the writer here writes exactly what it
//! decided: member lines, `## key` sections, inline arrays, tables with their cells, header
//! constants, path columns, attachments at the row's level with bodies two levels deeper,
//! positional inline bodies, headerless shared-schema rows, expanded items, keyed tables and
//! value-grouped sets. Every path writes into one output buffer, `Out` (`out.rs`): short
//! pieces, a line's start, integers and hundredths stored with one check for room each.

use super::out::Out;
use super::plan::{same_scalar, ArrayForm, Form, Table};
use super::view::{Node, Scalar};
use crate::error::{Error, ErrorKind, Limit, Result};
use crate::lex::{self, Place, Sink};
use crate::number;
use crate::options::EncoderOptions;

/// From this many rows up, a table is written in one pass ([`Encoder::one_pass`]); smaller
/// ones are planned over all their rows first (they stay in cache, and a plan that turns out
/// wrong costs a second write).
const ONE_PASS_ROWS: usize = 16;

/// After this many rows of a one-pass table, the output reserves room for the rest at their
/// average size ([`Encoder::reserve_rows`]).
const SIZED_AFTER: usize = 8;

/// Where a value is written; decides the spelling of its header line.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Head<'k> {
    /// The root: `## [N]...`, members at depth 0, `=value`.
    Root,
    /// An object member: `key=value`, `## key`, `## key [N]...`, `key[N]: ...`.
    Member(&'k str),
    /// An expanded item: `@i =value`, `@i {}`, `@i [N]...`.
    Item(usize),
    /// A traditional attachment of a table row: `.key =value`, `.key {}`, `.key [N]...`.
    Attachment(&'k str),
}

impl Head<'_> {
    /// Where the rows of a table (or the items of an expanded array) under this header go,
    /// for a header at `depth`.
    fn body(self, depth: usize) -> usize {
        match self {
            Head::Root => 0,
            Head::Member(_) => depth,
            Head::Item(_) => depth + 1,
            Head::Attachment(_) => depth + 2,
        }
    }

    /// Writes a header at `depth` up to where its `[` goes: `## `, `## key `, `key` (the
    /// `inline` spelling of a member's primitive array), `@i `, `.key `.
    pub(crate) fn write(self, out: &mut impl Sink, depth: usize, inline: bool) {
        lex::indent(out, depth);
        match self {
            Head::Member(key) if inline => write_key(out, key),
            Head::Root => out.push_str("## "),
            Head::Member(key) => {
                out.push_str("## ");
                write_key(out, key);
                out.push(' ');
            }
            Head::Item(i) => {
                out.push('@');
                number::write_u64(out, i as u64);
                out.push(' ');
            }
            Head::Attachment(key) => {
                out.push('.');
                write_key(out, key);
                out.push(' ');
            }
        }
    }
}

/// String equality without a `memcmp` call for the short strings keys usually are.
#[inline(always)]
pub(crate) fn key_eq(a: &str, b: &str) -> bool {
    key_eq_bytes(a.as_bytes(), b.as_bytes())
}

/// [`key_eq`] on bytes.
#[inline(always)]
pub(crate) fn key_eq_bytes(a: &[u8], b: &[u8]) -> bool {
    #[inline(always)]
    fn u32_at(s: &[u8], i: usize) -> u32 {
        u32::from_le_bytes([s[i], s[i + 1], s[i + 2], s[i + 3]])
    }
    #[inline(always)]
    fn u64_at(s: &[u8], i: usize) -> u64 {
        u64::from_le_bytes([
            s[i],
            s[i + 1],
            s[i + 2],
            s[i + 3],
            s[i + 4],
            s[i + 5],
            s[i + 6],
            s[i + 7],
        ])
    }
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if std::ptr::eq(a.as_ptr(), b.as_ptr()) {
        // The same borrowed string (a struct's field name, row after row).
        return true;
    }
    match n {
        0 => true,
        // Overlapping loads cover every byte.
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=8 => u32_at(a, 0) == u32_at(b, 0) && u32_at(a, n - 4) == u32_at(b, n - 4),
        9..=16 => u64_at(a, 0) == u64_at(b, 0) && u64_at(a, n - 8) == u64_at(b, n - 8),
        _ => a == b,
    }
}

/// Appends a key: bare when it is a bare key, quoted otherwise (spec §2a.1).
#[inline(always)]
pub(crate) fn write_key(out: &mut impl Sink, key: &str) {
    if lex::writes_bare(key) {
        out.push_str(key);
    } else {
        lex::write_quoted(out, key);
    }
}

/// A key's bit in a member Bloom filter: a multiplicative hash of its first eight bytes, its
/// last byte and its length.
#[inline]
pub(crate) fn key_bit(key: &str) -> u64 {
    let b = key.as_bytes();
    let mut word = [0u8; 8];
    let n = b.len().min(8);
    word[..n].copy_from_slice(&b[..n]);
    let last = b.last().map_or(0, |&c| u64::from(c));
    let x = u64::from_le_bytes(word) ^ ((b.len() as u64) << 56) ^ last;
    1 << (x.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58)
}

/// Writes a scalar as the version has it (quoting rule, numeric layout and domain).
#[inline(always)]
pub(crate) fn write_scalar(out: &mut impl Sink, scalar: Scalar<'_>, current: bool) -> Result<()> {
    match scalar {
        Scalar::Str(s) => {
            let quote = if current {
                lex::needs_quote_current(s)
            } else {
                lex::needs_quote(s)
            };
            if quote {
                lex::write_quoted(out, s);
            } else {
                out.push_str(s);
            }
        }
        Scalar::U64(v) => {
            if current {
                number::write_u64_current(out, v)?;
            } else {
                number::write_u64(out, v);
            }
        }
        Scalar::I64(v) => number::write_i64(out, v),
        Scalar::F64(v) => {
            if current {
                number::write_f64_current(out, v)?;
            } else {
                number::write_f64(out, v)?;
            }
        }
        Scalar::Bool(true) => out.push_str("true"),
        Scalar::Bool(false) => out.push_str("false"),
        Scalar::Null => out.push('-'),
        Scalar::F32(v) => {
            if current {
                number::write_f32_current(out, v)?;
            } else {
                number::write_f32(out, v)?;
            }
        }
        Scalar::Lexeme(lexeme) => write_lexeme(out, lexeme, current)?,
        Scalar::Json(n) => write_lexeme(out, &n.to_string(), current)?,
    }
    Ok(())
}

fn write_lexeme(out: &mut impl Sink, lexeme: &str, current: bool) -> Result<()> {
    if current {
        number::write_lexeme_current(out, lexeme)
    } else {
        number::write_lexeme(out, lexeme)
    }
}

/// Writes the value of a constant column (v3.6 §7.4.7.2).
pub(crate) fn write_const(out: &mut impl Sink, scalar: Scalar<'_>) -> Result<()> {
    match scalar {
        Scalar::Str(s) => {
            lex::write_const_str(out, s);
            Ok(())
        }
        other => write_scalar(out, other, true),
    }
}

#[cold]
pub(crate) fn too_deep(max_depth: usize) -> Error {
    Error::new(
        ErrorKind::LimitExceeded(Limit::Depth),
        format!("the value nests deeper than {max_depth} levels (EncoderOptions::max_depth)"),
    )
}

/// The planner's and the writer's state for one payload.
pub(crate) struct Encoder<'v, 'o, N> {
    pub(crate) opts: &'o EncoderOptions,
    /// The current spec (not v3.1).
    pub(crate) current: bool,
    /// The output, owned for the walk (one indirection less per write).
    pub(crate) out: Out,
    /// Table plans no longer in use, kept for their allocations.
    // (Boxed: a plan is moved out of and back into the pool as a pointer, not copied.)
    #[allow(clippy::vec_box)]
    pub(crate) spare_tables: Vec<Box<Table<'v, N>>>,
    /// Row slot buffers no longer in use.
    slots: Vec<Vec<Option<N>>>,
    /// The fewest-tokens search, with a token counter.
    pub(crate) fewest: Option<Box<super::fewest::Search<'o>>>,
    /// Strings are quoted only as their context needs (fewest tokens).
    pub(crate) minimal: bool,
    /// Large tables are written in one pass ([`Encoder::one_pass`]); off in the tests that
    /// hold it against planning every table first.
    one_pass: bool,
    /// Set when an array written in a shared schema is not in step with it (every row the
    /// schema's keys, in order, with scalars) or is empty: a plan made from fewer rows then
    /// no longer holds ([`Encoder::fused_row`]).
    misfit: bool,
    /// Set while the first array of a shared array schema is written: its declaration is the
    /// schema later arrays' rows are read by, so it holds no constant column (their rows
    /// carry every field as a cell).
    pub(crate) shared_first: bool,
    /// The key and depth of the last array written in a shared schema after its first
    /// (`shared_rows`), and its header up to the count, `.key [`: written again as it is for
    /// the same field's arrays, row after row. (A key borrowed from the value, alive for the
    /// whole walk, is the same string when its address and length are.)
    shared_head: (&'v str, usize),
    shared_head_text: String,
    /// The fields of the last declaration of columns of cells and constants written
    /// (`{a,b=1}`), each name with its constant's value, and its text: written again as it
    /// is for a table of the same fields (small tables of one shape, object after object).
    last_decl: Vec<(&'v str, Option<Scalar<'v>>)>,
    last_decl_text: Vec<u8>,
}

/// Encodes the value at `root` into `out` (after the header, which is the caller's).
pub(crate) fn encode<'v, N: Node<'v>>(
    root: N,
    opts: &EncoderOptions,
    out: &mut String,
) -> Result<()> {
    let mut encoder = Encoder::new(opts, Out::from_string(std::mem::take(out)));
    let written = encoder.root(root);
    *out = encoder.out.into_string();
    written
}

impl<'v, 'o, N: Node<'v>> Encoder<'v, 'o, N> {
    pub(crate) fn new(opts: &'o EncoderOptions, out: Out) -> Self {
        let current = opts.current();
        Encoder {
            opts,
            current,
            out,
            spare_tables: Vec::new(),
            slots: Vec::new(),
            fewest: if current {
                opts.fewest
                    .as_ref()
                    .map(|counter| Box::new(super::fewest::Search::new(&*counter.0)))
            } else {
                None
            },
            minimal: current && opts.fewest.is_some(),
            one_pass: true,
            misfit: false,
            shared_first: false,
            shared_head: ("", usize::MAX),
            shared_head_text: String::new(),
            last_decl: Vec::new(),
            last_decl_text: Vec::new(),
        }
    }

    /// A container at nesting `level` (the root's is 1), within the depth limit.
    #[inline]
    pub(crate) fn enter(&self, level: usize) -> Result<()> {
        if level > self.opts.max_depth {
            return Err(too_deep(self.opts.max_depth));
        }
        Ok(())
    }

    /// Writes a scalar at `place` (which decides a string's quoting in fewest-tokens
    /// encodings).
    #[inline(always)]
    pub(crate) fn scalar(&mut self, scalar: Scalar<'_>, place: Place) -> Result<()> {
        if self.minimal {
            if let Scalar::Str(s) = scalar {
                lex::write_str_at(&mut self.out, s, place);
                return Ok(());
            }
        }
        write_scalar(&mut self.out, scalar, self.current)
    }

    /// Writes the body of a payload whose value is at `root`.
    pub(crate) fn root(&mut self, root: N) -> Result<()> {
        if self.current && self.opts.grouping.is_some() {
            return self.grouped_root(root);
        }
        self.value(Head::Root, root, 0, 0)
    }

    /// Writes a value (at nesting `level`, its container's) under `head` at `depth`.
    pub(crate) fn value(
        &mut self,
        head: Head<'_>,
        node: N,
        depth: usize,
        level: usize,
    ) -> Result<()> {
        match node.scalar() {
            Some(scalar) => {
                match head {
                    Head::Root => self.out.push('='),
                    Head::Member(key) => self.member_start(depth, key),
                    Head::Item(i) => {
                        self.out.indent(depth);
                        self.out.push('@');
                        number::write_u64(&mut self.out, i as u64);
                        self.out.push_str(" =");
                    }
                    Head::Attachment(key) => {
                        self.out.indent(depth);
                        self.out.push('.');
                        write_key(&mut self.out, key);
                        self.out.push_str(" =");
                    }
                }
                self.scalar(scalar, Place::Value)?;
                self.out.push('\n');
                Ok(())
            }
            None if node.is_object() => self.object(head, node, depth, level + 1),
            None => self.array(head, node, depth, level + 1),
        }
    }

    /// Writes the start of a member line at `depth`: `key=`.
    #[cfg_attr(debug_assertions, inline)]
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn member_start(&mut self, depth: usize, key: &str) {
        if !(lex::writes_bare(key) && self.out.line_start(depth, b"", key.as_bytes(), b'=')) {
            self.out.indent(depth);
            write_key(&mut self.out, key);
            self.out.push('=');
        }
    }

    /// Writes a section line at `depth`: `## key`.
    // (Not inlined always: unoptimized, the recursive frames would grow by its slots.)
    #[inline]
    fn section_line(&mut self, depth: usize, key: &str) {
        if !(lex::writes_bare(key) && self.out.line_start(depth, b"## ", key.as_bytes(), b'\n')) {
            self.out.indent(depth);
            self.out.push_str("## ");
            write_key(&mut self.out, key);
            self.out.push('\n');
        }
    }

    /// Writes an inline array's header under `head` at `depth` up to its count: `key[`.
    #[inline]
    fn inline_head(&mut self, head: Head<'_>, depth: usize) {
        if let Head::Member(key) = head {
            if lex::writes_bare(key) && self.out.line_start(depth, b"", key.as_bytes(), b'[') {
                return;
            }
        }
        head.write(&mut self.out, depth, true);
        self.out.push('[');
    }

    /// Writes the members of an object at `depth` (the object at nesting `level`).
    pub(crate) fn members(&mut self, object: N, depth: usize, level: usize) -> Result<()> {
        for (key, value) in object.members() {
            match value.scalar() {
                // `key=value`, the most common line, written here.
                Some(scalar) => {
                    self.member_start(depth, key);
                    self.scalar(scalar, Place::Value)?;
                    self.out.push('\n');
                }
                None if value.is_object() => {
                    self.object(Head::Member(key), value, depth, level + 1)?;
                }
                None => self.array(Head::Member(key), value, depth, level + 1)?,
            }
        }
        Ok(())
    }

    /// Writes an object (at nesting `level`) under `head` at `depth`: member lines under a
    /// section line, or a keyed table.
    pub(crate) fn object(
        &mut self,
        head: Head<'_>,
        object: N,
        depth: usize,
        level: usize,
    ) -> Result<()> {
        self.enter(level)?;
        if self.current && self.opts.keyed_maps && self.keyed_candidate(object) {
            let keyed = match self.fewest.is_some() {
                true => self.fewest_keyed(head, object, depth, level)?,
                false => true,
            };
            if keyed {
                return self.keyed_table(head, object, depth, level);
            }
        }
        let body = match head {
            Head::Root => 0,
            Head::Member(key) => {
                self.section_line(depth, key);
                depth + 1
            }
            Head::Item(i) => {
                self.out.indent(depth);
                self.out.push('@');
                number::write_u64(&mut self.out, i as u64);
                self.out.push_str(" {}\n");
                depth + 1
            }
            Head::Attachment(key) => {
                self.out.indent(depth);
                self.out.push('.');
                write_key(&mut self.out, key);
                self.out.push_str(" {}\n");
                depth + 2
            }
        };
        self.members(object, body, level)
    }

    /// Writes an object (at nesting `level`) as a keyed table under `head` at `depth`.
    fn keyed_table(&mut self, head: Head<'_>, object: N, depth: usize, level: usize) -> Result<()> {
        // The members are rows one level down.
        self.enter(level + 1)?;
        if self.one_pass && self.fewest.is_none() && object.len() >= ONE_PASS_ROWS {
            let rows = object.members().map(|(k, v)| (Some(k), v));
            if self.one_pass(head, rows, object.len(), true, false, depth, level + 1)? {
                return Ok(());
            }
        }
        let values = object.members().map(|(_, v)| v);
        let n = object.len();
        let table = self.plan_table(
            object.id(),
            values,
            n,
            true,
            false,
            level + 1,
            head.body(depth),
            false,
        )?;
        let rows = object.members().map(|(k, v)| (Some(k), v));
        let written = self.table(head, &table, rows, object.len(), depth, level + 1);
        self.give_table(table);
        written
    }

    /// Writes an array (at nesting `level`) under `head` at `depth`.
    pub(crate) fn array(
        &mut self,
        head: Head<'_>,
        items: N,
        depth: usize,
        level: usize,
    ) -> Result<()> {
        self.enter(level)?;
        let mut form = self.array_form(items);
        if form == ArrayForm::Table
            && self.fewest.is_some()
            && !self.fewest_tabular(head, items, depth, level)?
        {
            form = ArrayForm::Expanded;
        }
        let n = items.len();
        match form {
            ArrayForm::Empty => {
                head.write(&mut self.out, depth, false);
                self.out.push_str("[0]\n");
                Ok(())
            }
            ArrayForm::Inline => {
                self.inline_head(head, depth);
                number::write_u64(&mut self.out, n as u64);
                self.out.push_str("]: ");
                for (j, item) in items.elements().enumerate() {
                    if j > 0 {
                        self.out.push(',');
                    }
                    if let Some(scalar) = item.scalar() {
                        self.scalar(scalar, Place::Element)?;
                    }
                }
                self.out.push('\n');
                Ok(())
            }
            ArrayForm::Table => {
                // The rows are objects one level down.
                self.enter(level + 1)?;
                if self.fewest.is_some() && matches!(head, Head::Root | Head::Member(_)) {
                    if let Some((key, group)) = self.fewest_grouping(head, items, depth, level)? {
                        return self.write_grouped(head, items, &key, &group, depth);
                    }
                }
                let top = matches!(head, Head::Root | Head::Member(_));
                let body = head.body(depth);
                if self.one_pass && self.fewest.is_none() && n >= ONE_PASS_ROWS {
                    let rows = items.elements().map(|e| (None, e));
                    if self.one_pass(head, rows, n, false, top, depth, level + 1)? {
                        return Ok(());
                    }
                }
                // A small table of scalar rows keeps their scalars in the plan, and is
                // written from them (the rows not read again).
                let keep = self.one_pass && n < ONE_PASS_ROWS;
                let table = self.plan_table(
                    items.id(),
                    items.elements(),
                    n,
                    false,
                    top,
                    level + 1,
                    body,
                    keep,
                )?;
                if !table.has_columns() {
                    // Every field holds `>`: no column can be declared.
                    self.give_table(table);
                    return self.expanded(head, items, depth, level);
                }
                let written = if keep && table.cells.len() == n * table.names.len() {
                    self.scalar_table(head, &table, n, depth)
                } else {
                    let rows = items.elements().map(|e| (None, e));
                    self.table(head, &table, rows, n, depth, level + 1)
                };
                self.give_table(table);
                written
            }
            ArrayForm::Expanded => self.expanded(head, items, depth, level),
        }
    }

    /// Writes an array (at nesting `level`) as expanded `@i` items.
    pub(crate) fn expanded(
        &mut self,
        head: Head<'_>,
        items: N,
        depth: usize,
        level: usize,
    ) -> Result<()> {
        head.write(&mut self.out, depth, false);
        self.out.push('[');
        number::write_u64(&mut self.out, items.len() as u64);
        self.out.push_str("]\n");
        let body = head.body(depth);
        for (i, item) in items.elements().enumerate() {
            self.value(Head::Item(i), item, body, level)?;
        }
        Ok(())
    }

    /// Writes expanded item `i` at `depth` (for the stream encoder).
    pub(crate) fn item(&mut self, i: usize, item: N, depth: usize) -> Result<()> {
        self.value(Head::Item(i), item, depth, 0)
    }

    /// Writes a table under `head` at `depth`: its header, then each row (`rows`, objects at
    /// nesting `level`, with their keys when the table is a keyed map) and its attachments.
    pub(crate) fn table<I>(
        &mut self,
        head: Head<'_>,
        table: &Table<'v, N>,
        rows: I,
        n: usize,
        depth: usize,
        level: usize,
    ) -> Result<()>
    where
        I: Iterator<Item = (Option<&'v str>, N)>,
    {
        self.table_header(head, table, n, depth)?;
        let body = head.body(depth);
        let mut slots = self.slots.pop().unwrap_or_default();
        let mut written = Ok(());
        for (r, (key, row)) in rows.enumerate() {
            written = self.row(table, r, key, row, body, level, &mut slots, None);
            if written.is_err() {
                break;
            }
        }
        if self.slots.len() < 16 {
            self.slots.push(slots);
        }
        written
    }

    /// Writes a table of scalar rows from the scalars its plan kept (`table.cells`, row
    /// after row): the header, then per row its cells but the constant ones.
    fn scalar_table(
        &mut self,
        head: Head<'_>,
        table: &Table<'v, N>,
        n: usize,
        depth: usize,
    ) -> Result<()> {
        self.table_header(head, table, n, depth)?;
        let body = head.body(depth);
        for row in table.cells.chunks_exact(table.names.len()) {
            self.out.indent(body);
            let mut first = true;
            for (&scalar, field) in row.iter().zip(&table.fields) {
                if field.form == Form::Const {
                    continue;
                }
                if !first {
                    self.out.push('|');
                }
                first = false;
                write_scalar(&mut self.out, scalar, self.current)?;
            }
            self.out.push('\n');
        }
        Ok(())
    }

    /// A table's header line: `## key [N]{...}`, `## key [N:]{...}`, `.key [N]{...}`, ...
    fn table_header(
        &mut self,
        head: Head<'_>,
        table: &Table<'v, N>,
        n: usize,
        depth: usize,
    ) -> Result<()> {
        head.write(&mut self.out, depth, false);
        self.out.push('[');
        number::write_u64(&mut self.out, n as u64);
        if table.label.is_some() {
            self.out.push(':');
        }
        self.out.push(']');
        self.declaration(table)?;
        self.out.push('\n');
        Ok(())
    }

    /// Writes a table in one pass, each row read by the planner just before it is written (a
    /// second pass over a large table costs as much in memory traffic as in work): the plan
    /// is the planner's for row 0 alone, without constant columns, and it stands when the
    /// plan of every row is the same. `Ok(false)` when a row is not in step with row 0's
    /// fields, breaks row 0's forms, or the complete plan differs (a constant column, a key
    /// column label): the output is then cut back and the caller plans over every row first.
    #[allow(clippy::too_many_arguments)]
    fn one_pass<I>(
        &mut self,
        head: Head<'_>,
        rows: I,
        n: usize,
        keyed: bool,
        top: bool,
        depth: usize,
        level: usize,
    ) -> Result<bool>
    where
        I: Iterator<Item = (Option<&'v str>, N)>,
    {
        let mark = self.out.len();
        let allow = self.allow(top, keyed);
        let mut table = self.take_table();
        let mut state = self.scan_state(level);
        let mut rows = rows.enumerate();
        let written = self.one_pass_rows(
            &mut table, &mut state, &mut rows, head, n, keyed, allow, depth, level,
        );
        let done = match written {
            Ok(true) => {
                // Every row read: the complete plan must be the one the rows were written in.
                self.finish_scan(&mut table, &state);
                let guess: Vec<(Form, Option<(u32, u32)>)> =
                    table.fields.iter().map(|f| (f.form, f.shared)).collect();
                let label = table.label;
                if keyed {
                    table.label = Some(super::plan::key_label(&table.names));
                }
                self.canonical(&mut table, n, allow);
                table.label == label
                    && table.fields.len() == guess.len()
                    && table
                        .fields
                        .iter()
                        .zip(&guess)
                        .all(|(f, g)| (f.form, f.shared) == *g)
            }
            Ok(false) => false,
            Err(e) => {
                self.give_table(table);
                return Err(e);
            }
        };
        self.give_table(table);
        if !done {
            self.out.truncate(mark);
        }
        Ok(done)
    }

    /// The rows of [`Encoder::one_pass`]; `Ok(false)` as soon as a row breaks the plan.
    #[allow(clippy::too_many_arguments)]
    fn one_pass_rows<I>(
        &mut self,
        table: &mut Table<'v, N>,
        state: &mut super::plan::ScanState,
        rows: &mut std::iter::Enumerate<I>,
        head: Head<'_>,
        n: usize,
        keyed: bool,
        allow: super::plan::Allow,
        depth: usize,
        level: usize,
    ) -> Result<bool>
    where
        I: Iterator<Item = (Option<&'v str>, N)>,
    {
        let Some((_, (key, first))) = rows.next() else {
            return Ok(false);
        };
        if !first.is_object() {
            return Ok(false);
        }
        self.scan_row(table, state, 0, first, allow, None);
        if table.names.is_empty() {
            return Ok(false);
        }
        if keyed {
            table.label = Some(super::plan::key_label(&table.names));
        }
        // Row 0's plan, without constant columns (one row cannot show them).
        let mut guess = allow;
        guess.constants = false;
        self.canonical(table, n, guess);
        if !table.has_columns() {
            return Ok(false);
        }
        self.table_header(head, table, n, depth)?;
        let body = head.body(depth);
        let mut slots = Vec::new();
        let from = self.out.len();
        self.row(table, 0, key, first, body, level, &mut slots, None)?;
        let mut values = Vec::with_capacity(table.names.len());
        // The fields a later row can take out of their form (a column of cells takes anything).
        let guarded = table
            .fields
            .iter()
            .any(|f| !matches!(f.form, Form::Cells | Form::Attach) || f.shared.is_some());
        // Columns of cells (shared array schemas among them), flattened columns and
        // attachments: each row read and written in one loop, which checks as it writes
        // that the row keeps the fields' forms.
        let fusable = table.fields.iter().all(|f| {
            matches!(
                f.form,
                Form::Cells | Form::Attach | Form::Flat | Form::Inline
            )
        });
        if fusable && table.aligned {
            // Whether the last row had attachments: the next is written with its `@r `
            // prefix from the start if so (rows of a table mostly all have, or all lack,
            // attachments), which is cut if it turns out to have none.
            // (Row 0's, a guess only: its line starts with `@` after the indentation when it
            // has the prefix, since a cell so placed that starts with `@` is quoted.)
            let mut speculate = self.out.as_bytes().get(from + body * 2) == Some(&b'@');
            // The values of the row being written that may have attachments, with their
            // fields, in field order.
            let mut held = Vec::with_capacity(table.names.len());
            let shapes = Shapes::of(table);
            for (r, (key, row)) in rows.by_ref() {
                if !row.is_object() {
                    return Ok(false);
                }
                if r == SIZED_AFTER {
                    self.reserve_rows(from, r, n);
                }
                let mark = self.out.len();
                let fused = if guarded {
                    self.fused_row::<true>(
                        table,
                        state,
                        r,
                        key,
                        row,
                        allow,
                        body,
                        level,
                        &mut speculate,
                        &mut held,
                        &shapes,
                    )
                } else {
                    self.fused_row::<false>(
                        table,
                        state,
                        r,
                        key,
                        row,
                        allow,
                        body,
                        level,
                        &mut speculate,
                        &mut held,
                        &shapes,
                    )
                };
                if !fused? {
                    // Not in step with the fields, or out of a field's form: read the usual
                    // way below.
                    self.out.truncate(mark);
                    values.clear();
                    if !self.scan_row(table, state, r, row, allow, Some(&mut values))
                        || (guarded && !self.plan_holds(table))
                    {
                        return Ok(false);
                    }
                    self.row(table, r, key, row, body, level, &mut slots, Some(&values))?;
                    break;
                }
            }
        }
        for (r, (key, row)) in rows {
            values.clear();
            if !row.is_object() || !self.scan_row(table, state, r, row, allow, Some(&mut values)) {
                return Ok(false);
            }
            if r == SIZED_AFTER {
                self.reserve_rows(from, r, n);
            }
            if guarded && !self.plan_holds(table) {
                return Ok(false);
            }
            self.row(table, r, key, row, body, level, &mut slots, Some(&values))?;
        }
        Ok(true)
    }

    /// Reserves room for a table's rows from `r` to `n` at the average size of the `r` written
    /// from `from`, with a quarter more for rows that run longer (at most 64 MiB in all): the
    /// output then grows once, not by doubling, each step of which copies everything written
    /// so far.
    #[inline(never)]
    fn reserve_rows(&mut self, from: usize, r: usize, n: usize) {
        let per_row = self.out.len().saturating_sub(from) / r.max(1);
        let rest = per_row.saturating_mul(n.saturating_sub(r));
        self.out.reserve(rest.saturating_add(rest / 4).min(1 << 26));
    }

    /// Reads (for the planner) and writes row `r` of a one-pass table whose fields are
    /// columns of cells (shared array schemas among them), flattened columns, inline object
    /// schemas and attachments, in one loop over its members; `Ok(false)` when the members
    /// are not the fields in order or a value is out of its field's form (a flattened
    /// object not of the shape, an inline schema's object without its keys, a shared
    /// schema's array not in step with it): the row is then incomplete, and
    /// what was read of it is read again by [`Encoder::scan_row`].
    ///
    /// `CHECKED` false is the loop for a table of columns of cells and attachments alone (no
    /// field a row can take out of its form, the most common large tables): leaner, with
    /// fewer values live across it (`rows_10k` reads a tenth less data, and runs 5 % faster,
    /// than in the checking loop); its `@r` prefix is inserted when the row turns out to
    /// have attachments, and they are found by walking the row again.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn fused_row<const CHECKED: bool>(
        &mut self,
        table: &mut Table<'v, N>,
        state: &mut super::plan::ScanState,
        r: usize,
        key: Option<&str>,
        row: N,
        allow: super::plan::Allow,
        depth: usize,
        level: usize,
        speculate: &mut bool,
        held: &mut Vec<(usize, N)>,
        shapes: &Shapes<'v>,
    ) -> Result<bool> {
        if row.len() != table.names.len() {
            return Ok(false);
        }
        let line = self.out.len();
        self.out.indent(depth);
        let at = self.out.len();
        if CHECKED && *speculate {
            self.out.push('@');
            number::write_small_u64(&mut self.out, r as u64);
            self.out.push(' ');
        }
        let prefix = self.out.len() - at;
        if CHECKED {
            held.clear();
        }
        let mut first = true;
        let mut nested = false;
        if let Some(key) = key {
            self.scalar(Scalar::Str(key), Place::Cell { first: true })?;
            first = false;
        }
        let budget = state.budget;
        let Table {
            names,
            fields,
            facts,
            keys,
            sparse,
            ..
        } = &mut *table;
        let mut members = row.members();
        for (c, ((name, field), facts)) in names.iter().zip(&*fields).zip(facts).enumerate() {
            let Some((key, value)) = members.next() else {
                return Ok(false);
            };
            if !key_eq(name, key) {
                return Ok(false);
            }
            let scalar = value.scalar();
            if !CHECKED {
                self.observe(facts, keys, sparse, c, value, scalar, allow, budget);
                // A column of cells has the scalar or `^`; an attachment is written after.
                if field.form == Form::Cells {
                    if !first {
                        self.out.push('|');
                    }
                    match scalar {
                        Some(scalar) => self.scalar(scalar, Place::Cell { first })?,
                        None => self.out.push('^'),
                    }
                    first = false;
                }
                nested |= scalar.is_none() || field.form == Form::Attach;
                continue;
            }
            if let (Form::Cells, None, Some(scalar)) = (field.form, field.shared, scalar) {
                // The usual cell: a scalar in a column of cells.
                self.observe(facts, keys, sparse, c, value, Some(scalar), allow, budget);
                if !first {
                    self.out.push('|');
                }
                self.scalar(scalar, Place::Cell { first })?;
                first = false;
                continue;
            }
            // Its attachments, if any, are written after the line.
            held.push((c, value));
            match (field.form, scalar) {
                (Form::Flat, _) => {
                    // Written as the shape's leaves, checked against it on the way.
                    let (Some(shape), false) = (field.node, value.is_scalar()) else {
                        return Ok(false);
                    };
                    let mut leaf = false;
                    let fitted = match shapes.keys(c) {
                        Some(keys) => self.fitted_leaves(keys, value, &mut first, &mut leaf)?,
                        None => self.fitted_cells(shape, value, &mut first, &mut leaf)?,
                    };
                    if !fitted || !leaf {
                        return Ok(false);
                    }
                    facts.fitted(value.kind_bit());
                    continue;
                }
                (Form::Cells, None) if field.shared.is_some() => {
                    // Checked as its attachment is written (`self.misfit`).
                    if !value.is_array() {
                        return Ok(false);
                    }
                    facts.fitted(value.kind_bit());
                }
                (Form::Cells, Some(_)) if field.shared.is_some() => return Ok(false),
                (Form::Inline, None) => {
                    // Checked as its body is written (`self.misfit`); while flattening is
                    // still possible for the field, read as `scan_row` reads it.
                    if !value.is_object() || facts.flat_possible() {
                        return Ok(false);
                    }
                    facts.fitted(value.kind_bit());
                }
                (Form::Inline, Some(_)) => return Ok(false),
                _ => self.observe(facts, keys, sparse, c, value, scalar, allow, budget),
            }
            // A column of cells has the scalar or `^` (as an inline schema's has `^`); an
            // attachment is written after.
            if matches!(field.form, Form::Cells | Form::Inline) {
                if !first {
                    self.out.push('|');
                }
                match scalar {
                    Some(scalar) => self.scalar(scalar, Place::Cell { first })?,
                    None => self.out.push('^'),
                }
                first = false;
            }
            nested |= scalar.is_none() || field.form == Form::Attach;
        }
        if !CHECKED {
            state.count_aligned();
            if nested {
                self.nested_prefix(r, line, depth, level)?;
            }
            self.out.push('\n');
            if nested {
                let values = row.members().map(|(_, v)| v).enumerate();
                self.attachments(table, r, values, depth, level, None)?;
            }
            return Ok(true);
        }
        match (nested, *speculate) {
            (true, true) => self.enter(level + 1)?,
            (true, false) => self.nested_prefix(r, line, depth, level)?,
            (false, true) => self.out.remove(at, at + prefix),
            (false, false) => {}
        }
        *speculate = nested;
        self.out.push('\n');
        if !nested {
            state.count_aligned();
            return Ok(true);
        }
        // (A table in an attachment may be a one-pass table too: its rows' flag is its own.)
        let outer = std::mem::replace(&mut self.misfit, false);
        self.attachments(table, r, held.iter().copied(), depth, level, Some(shapes))?;
        if std::mem::replace(&mut self.misfit, outer) {
            return Ok(false);
        }
        state.count_aligned();
        Ok(true)
    }

    /// The cells of a flattened object of `shape`'s shape: its leaves, in order;
    /// `Ok(false)` (the cells incomplete) when it is not of the shape. `leaf` is set when a
    /// leaf is not null.
    fn fitted_cells(
        &mut self,
        shape: N,
        object: N,
        first: &mut bool,
        leaf: &mut bool,
    ) -> Result<bool> {
        if shape.len() != object.len() {
            return Ok(false);
        }
        for ((name, part), (key, value)) in shape.members().zip(object.members()) {
            if !key_eq(name, key) {
                return Ok(false);
            }
            if part.is_object() {
                if !value.is_object() || !self.fitted_cells(part, value, first, leaf)? {
                    return Ok(false);
                }
                continue;
            }
            if !self.leaf_cell(value, first, leaf)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// [`Encoder::fitted_cells`] for a shape of one level, whose keys are `keys`: the
    /// object's members read against the slice, not beside the shape's own members.
    fn fitted_leaves(
        &mut self,
        keys: &[&str],
        object: N,
        first: &mut bool,
        leaf: &mut bool,
    ) -> Result<bool> {
        if keys.len() != object.len() {
            return Ok(false);
        }
        for (name, (key, value)) in keys.iter().zip(object.members()) {
            if !key_eq(name, key) || !self.leaf_cell(value, first, leaf)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// A flattened object's leaf as its cell; `Ok(false)` (nothing written) when it is not a
    /// scalar. `leaf` is set when it is not null.
    #[inline(always)]
    fn leaf_cell(&mut self, value: N, first: &mut bool, leaf: &mut bool) -> Result<bool> {
        let Some(scalar) = value.scalar() else {
            return Ok(false);
        };
        *leaf |= !matches!(scalar, Scalar::Null);
        if !*first {
            self.out.push('|');
        }
        self.scalar(scalar, Place::Cell { first: *first })?;
        *first = false;
        Ok(true)
    }

    /// A table's field declaration: `{key,a,"b>c",d=const}`.
    fn declaration(&mut self, table: &Table<'v, N>) -> Result<()> {
        // Columns of cells and constants alone: the last such declaration's text when the
        // fields are its fields.
        let plain = table.label.is_none()
            && !table.names.is_empty()
            && table
                .fields
                .iter()
                .all(|f| matches!(f.form, Form::Cells | Form::Const));
        if plain {
            if self.same_declaration(table) {
                self.out.push_bytes(&self.last_decl_text);
                return Ok(());
            }
            self.last_decl.clear();
            self.last_decl_text.clear();
        }
        let start = self.out.len();
        self.out.push('{');
        let mut first = true;
        if let Some(label) = table.label {
            self.out.push_str(label);
            first = false;
        }
        let mut path = String::new();
        for (name, field) in table.names.iter().zip(&table.fields) {
            match field.form {
                Form::Attach => {}
                Form::Flat => {
                    if let Some(shape) = field.node {
                        path.clear();
                        path.push_str(name);
                        self.paths(&mut path, shape, &mut first);
                    }
                }
                Form::Sparse => {
                    let (from, to) = field.union;
                    for key in &table.keys[from as usize..to as usize] {
                        if !first {
                            self.out.push(',');
                        }
                        first = false;
                        path.clear();
                        path.push_str(name);
                        path.push('>');
                        path.push_str(key);
                        write_key(&mut self.out, &path);
                    }
                }
                Form::Const => {
                    if !first {
                        self.out.push(',');
                    }
                    first = false;
                    write_key(&mut self.out, name);
                    self.out.push('=');
                    if let Some(scalar) = field.node.and_then(Node::scalar) {
                        write_const(&mut self.out, scalar)?;
                    }
                }
                Form::Cells | Form::Inline => {
                    if !first {
                        self.out.push(',');
                    }
                    first = false;
                    write_key(&mut self.out, name);
                }
            }
        }
        self.out.push('}');
        if plain {
            let current = table.names.iter().zip(&table.fields).map(|(&name, field)| {
                let constant = match field.form {
                    Form::Const => field.node.and_then(Node::scalar),
                    _ => None,
                };
                (name, constant)
            });
            self.last_decl.extend(current);
            self.last_decl_text.extend_from_slice(self.out.tail(start));
        }
        Ok(())
    }

    /// Whether a table of columns of cells and constants declares the fields of the last
    /// such declaration: the same names, and the same constants, written alike.
    fn same_declaration(&self, table: &Table<'v, N>) -> bool {
        self.last_decl.len() == table.names.len()
            && self
                .last_decl
                .iter()
                .zip(table.names.iter().zip(&table.fields))
                .all(|(&(name0, constant0), (name, field))| {
                    key_eq(name0, name)
                        && match (constant0, field.form) {
                            (None, Form::Cells) => true,
                            (Some(scalar0), Form::Const) => field
                                .node
                                .and_then(Node::scalar)
                                .is_some_and(|scalar| same_scalar(scalar0, scalar, self.current)),
                            _ => false,
                        }
                })
    }

    /// The path columns of a flattened object: `"path>key"` per scalar leaf, in order.
    fn paths(&mut self, path: &mut String, shape: N, first: &mut bool) {
        for (key, value) in shape.members() {
            let len = path.len();
            path.push('>');
            path.push_str(key);
            if value.is_object() {
                self.paths(path, value, first);
            } else {
                if !*first {
                    self.out.push(',');
                }
                *first = false;
                write_key(&mut self.out, path);
            }
            path.truncate(len);
        }
    }

    /// Writes row `r` of a table at `depth` (the row an object at nesting `level`) and its
    /// attachments.
    #[allow(clippy::too_many_arguments)]
    fn row(
        &mut self,
        table: &Table<'v, N>,
        r: usize,
        key: Option<&str>,
        row: N,
        depth: usize,
        level: usize,
        slots: &mut Vec<Option<N>>,
        values: Option<&[N]>,
    ) -> Result<()> {
        let line = self.out.len();
        self.out.indent(depth);
        // Whether the row has attachments, known before its cells where its values are in
        // field order: then its `@r ` prefix is written in place, not inserted after.
        let known = match values {
            Some(values) => Some(nests(table, values.iter().copied())),
            // (A table planned over its rows, or row 0 of a one-pass table, whose plan is
            // row 0's: the plan knows whether any row nests.)
            None if table.aligned => {
                Some(table.nests && nests(table, row.members().map(|(_, v)| v)))
            }
            None => None,
        };
        let prefixed = known == Some(true);
        if prefixed {
            self.out.push('@');
            number::write_u64(&mut self.out, r as u64);
            self.out.push(' ');
        }
        let mut first = true;
        let mut nested = false;
        if let Some(key) = key {
            self.scalar(Scalar::Str(key), Place::Cell { first: true })?;
            first = false;
        }
        if let Some(values) = values {
            // The row's values, in field order, as the planner read them.
            for (&value, field) in values.iter().zip(&table.fields) {
                self.aligned_cell(table, field, value, r, &mut first, &mut nested)?;
            }
        } else if table.aligned {
            for ((_, value), field) in row.members().zip(&table.fields) {
                self.aligned_cell(table, field, value, r, &mut first, &mut nested)?;
            }
        } else {
            fill(table, row, slots);
            for (value, field) in slots.iter().zip(&table.fields) {
                self.cell(table, field, *value, r, &mut first, &mut nested)?;
            }
        }
        debug_assert!(known.is_none_or(|known| known == nested));
        if prefixed {
            self.enter(level + 1)?;
        } else if nested {
            self.nested_prefix(r, line, depth, level)?;
        }
        self.out.push('\n');
        if nested {
            if let Some(values) = values {
                let values = values.iter().copied().enumerate();
                self.attachments(table, r, values, depth, level, None)?;
            } else if table.aligned {
                let values = row.members().map(|(_, v)| v).enumerate();
                self.attachments(table, r, values, depth, level, None)?;
            } else {
                let values = (slots.iter().enumerate()).filter_map(|(c, v)| Some((c, (*v)?)));
                self.attachments(table, r, values, depth, level, None)?;
            }
        }
        Ok(())
    }

    /// Inserts the `@r ` prefix of row `r`'s line (starting at `line`, at `depth`), a row
    /// with attachments.
    fn nested_prefix(&mut self, r: usize, line: usize, depth: usize, level: usize) -> Result<()> {
        self.enter(level + 1)?;
        let mut id = itoa::Buffer::new();
        let id = id.format(r);
        let at = line + depth * 2;
        let mut prefix = [0u8; 24];
        prefix[0] = b'@';
        prefix[1..=id.len()].copy_from_slice(id.as_bytes());
        prefix[id.len() + 1] = b' ';
        self.out.insert_str(at, &prefix[..id.len() + 2]);
        Ok(())
    }

    /// Writes the cells of a field a row has (a scalar in a column of cells inline).
    #[inline(always)]
    fn aligned_cell(
        &mut self,
        table: &Table<'v, N>,
        field: &super::plan::FieldPlan<N>,
        value: N,
        r: usize,
        first: &mut bool,
        nested: &mut bool,
    ) -> Result<()> {
        match (field.form, value.scalar()) {
            (Form::Cells, Some(scalar)) => {
                if !*first {
                    self.out.push('|');
                }
                self.scalar(scalar, Place::Cell { first: *first })?;
                *first = false;
                Ok(())
            }
            _ => self.cell(table, field, Some(value), r, first, nested),
        }
    }

    /// Writes one field's cells of a row.
    #[inline]
    fn cell(
        &mut self,
        table: &Table<'v, N>,
        field: &super::plan::FieldPlan<N>,
        value: Option<N>,
        r: usize,
        first: &mut bool,
        nested: &mut bool,
    ) -> Result<()> {
        match field.form {
            Form::Const => {}
            Form::Sparse => {
                let (from, to) = field.union;
                for key in &table.keys[from as usize..to as usize] {
                    if !*first {
                        self.out.push('|');
                    }
                    let place = Place::Cell { first: *first };
                    *first = false;
                    match value {
                        None => self.out.push('~'),
                        Some(object) if !object.is_object() => self.out.push('-'),
                        Some(object) => match object.get(key).and_then(Node::scalar) {
                            Some(scalar) => self.scalar(scalar, place)?,
                            None => self.out.push('~'),
                        },
                    }
                }
            }
            Form::Attach => *nested |= value.is_some(),
            Form::Flat => match value {
                Some(object) if object.is_object() => self.flat_cells(object, first)?,
                other => {
                    let cell = if other.is_some() { '-' } else { '~' };
                    for _ in 0..field.leaves {
                        if !*first {
                            self.out.push('|');
                        }
                        *first = false;
                        self.out.push(cell);
                    }
                }
            },
            Form::Cells | Form::Inline => {
                if !*first {
                    self.out.push('|');
                }
                let place = Place::Cell { first: *first };
                *first = false;
                match value {
                    None => self.out.push('~'),
                    Some(value) => match value.scalar() {
                        Some(scalar) => self.scalar(scalar, place)?,
                        None => {
                            self.out.push('^');
                            *nested = true;
                            if r == 0 && field.form == Form::Inline && value.is_object() {
                                self.out.push('{');
                                for (j, (key, _)) in value.members().enumerate() {
                                    if j > 0 {
                                        self.out.push(',');
                                    }
                                    write_key(&mut self.out, key);
                                }
                                self.out.push('}');
                            }
                        }
                    },
                }
            }
        }
        Ok(())
    }

    /// The cells of a flattened object: its scalar leaves, in order.
    fn flat_cells(&mut self, object: N, first: &mut bool) -> Result<()> {
        for (_, value) in object.members() {
            match value.scalar() {
                Some(scalar) => {
                    if !*first {
                        self.out.push('|');
                    }
                    self.scalar(scalar, Place::Cell { first: *first })?;
                    *first = false;
                }
                None => self.flat_cells(value, first)?,
            }
        }
        Ok(())
    }

    /// Writes the attachments of row `r` (at `depth`, an object at nesting `level`): the
    /// containers of its columns in field order, then the fields that are attachments only.
    /// `values` are the row's values with their fields, in field order (those of fields
    /// without attachments may be left out).
    ///
    /// `shapes`, for a one-pass row: the inline schemas' keys as slices.
    fn attachments<I>(
        &mut self,
        table: &Table<'v, N>,
        r: usize,
        values: I,
        depth: usize,
        level: usize,
        shapes: Option<&Shapes<'v>>,
    ) -> Result<()>
    where
        I: Iterator<Item = (usize, N)> + Clone,
    {
        for (c, value) in values.clone() {
            let field = &table.fields[c];
            if !matches!(field.form, Form::Cells | Form::Inline) || value.is_scalar() {
                continue;
            }
            if let (Form::Inline, true, Some(keys)) = (
                field.form,
                value.is_object(),
                shapes.and_then(|shapes| shapes.keys(c)),
            ) {
                let fits = keys.len() == value.len();
                self.inline_body(keys.iter().copied(), fits, value, depth, level)?;
                continue;
            }
            self.attachment(table, table.names[c], field, r, value, depth, level)?;
        }
        let attach = match shapes {
            Some(shapes) => shapes.attach,
            None => table.fields.iter().any(|field| field.form == Form::Attach),
        };
        if !attach {
            return Ok(());
        }
        for (c, value) in values {
            let field = &table.fields[c];
            if field.form == Form::Attach {
                self.attachment(table, table.names[c], field, r, value, depth, level)?;
            }
        }
        Ok(())
    }

    /// The positional body of an inline schema's object (at nesting `level`) at `depth`,
    /// checked against the schema on the way, for a one-pass row: its keys are `names`, as
    /// many as the object's members when `fits`.
    fn inline_body<'k>(
        &mut self,
        mut names: impl Iterator<Item = &'k str>,
        fits: bool,
        object: N,
        depth: usize,
        level: usize,
    ) -> Result<()> {
        self.enter(level + 1)?;
        self.out.indent(depth);
        self.misfit |= !fits;
        for (j, (key, cell)) in object.members().enumerate() {
            if j > 0 {
                self.out.push('|');
            }
            match cell.scalar() {
                Some(scalar) => self.scalar(scalar, Place::Cell { first: j == 0 })?,
                None => self.misfit = true,
            }
            self.misfit |= !names.next().is_some_and(|name| key_eq(name, key));
        }
        self.out.push('\n');
        Ok(())
    }

    /// One attachment of row `r` at `depth`.
    #[allow(clippy::too_many_arguments)]
    fn attachment(
        &mut self,
        table: &Table<'v, N>,
        name: &'v str,
        field: &super::plan::FieldPlan<N>,
        r: usize,
        value: N,
        depth: usize,
        level: usize,
    ) -> Result<()> {
        if field.form == Form::Inline && value.is_object() {
            // A positional body at the row's indentation, checked against the schema (row
            // 0's keys).
            return match field.node.filter(|schema| schema.len() == value.len()) {
                Some(schema) => {
                    let names = schema.members().map(|(name, _)| name);
                    self.inline_body(names, true, value, depth, level)
                }
                None => self.inline_body(std::iter::empty(), false, value, depth, level),
            };
        }
        if let (Some((from, to)), true, true) = (field.shared, r > 0, value.is_array()) {
            let schema = &table.keys[from as usize..to as usize];
            return self.shared_rows(name, value, schema, depth, level + 1);
        }
        if field.shared.is_some() && value.is_array() {
            self.shared_first = true;
            let written = self.value(Head::Attachment(name), value, depth, level);
            self.shared_first = false;
            return written;
        }
        self.value(Head::Attachment(name), value, depth, level)
    }

    /// `.key [M]` and the rows of an array (at nesting `level`) in its column's shared schema
    /// (spec §7.4.5.3), at `depth`.
    fn shared_rows(
        &mut self,
        key: &'v str,
        items: N,
        schema: &[&str],
        depth: usize,
        level: usize,
    ) -> Result<()> {
        self.enter(level)?;
        if items.len() > 0 {
            self.enter(level + 1)?;
        } else {
            self.misfit = true;
        }
        // `.key [` as the last such array had it: the same field's, row after row.
        let (last, at) = self.shared_head;
        if !(last.len() == key.len() && std::ptr::eq(last.as_ptr(), key.as_ptr()) && at == depth) {
            self.shared_head = (key, depth);
            self.shared_head_text.clear();
            Head::Attachment(key).write(&mut self.shared_head_text, depth, false);
            self.shared_head_text.push('[');
        }
        self.out.push_str(&self.shared_head_text);
        number::write_u64(&mut self.out, items.len() as u64);
        self.out.push_str("]\n");
        for row in items.elements() {
            let line = self.out.len();
            self.out.indent(depth + 2);
            // Most rows have the schema's keys in order: written as they are checked.
            let mut aligned = row.len() == schema.len();
            if aligned {
                for (j, ((key, value), name)) in row.members().zip(schema).enumerate() {
                    if !key_eq(key, name) {
                        aligned = false;
                        break;
                    }
                    if j > 0 {
                        self.out.push('|');
                    }
                    match value.scalar() {
                        Some(scalar) => self.scalar(scalar, Place::Cell { first: j == 0 })?,
                        None => self.misfit = true,
                    }
                }
            }
            if !aligned {
                self.misfit = true;
                self.out.truncate(line);
                self.out.indent(depth + 2);
                for (j, name) in schema.iter().enumerate() {
                    if j > 0 {
                        self.out.push('|');
                    }
                    match row.get(name).and_then(Node::scalar) {
                        Some(scalar) => self.scalar(scalar, Place::Cell { first: j == 0 })?,
                        None => self.out.push('~'),
                    }
                }
            }
            self.out.push('\n');
        }
        Ok(())
    }
}

impl<'v, N: Node<'v>> Encoder<'v, '_, N> {
    /// Writes row `r` of a streamed table whose fields are `names` (all columns of cells,
    /// nested values traditional attachments, since later rows are unknown) at `depth`; with
    /// `key`, the row of a keyed map's entry (the key its cell 0).
    pub(crate) fn stream_row(
        &mut self,
        names: &[&'v str],
        r: usize,
        key: Option<&str>,
        row: N,
        depth: usize,
    ) -> Result<()> {
        if !row.is_object() {
            return Err(Error::new(
                ErrorKind::UnsupportedValue,
                "a table row must be an object (a struct or a map)",
            ));
        }
        let mut table = self.take_table();
        table.declare(names);
        if let Some(key) = row
            .members()
            .enumerate()
            .find_map(|(pos, (key, _))| table.find(key, pos).is_none().then_some(key))
        {
            self.give_table(table);
            return Err(Error::new(
                ErrorKind::UnsupportedValue,
                format!(
                    "key {key:?} is not a declared field of the table (a streaming table needs \
                     its complete field list up front, spec §8.3)"
                ),
            ));
        }
        let mut slots = self.slots.pop().unwrap_or_default();
        let written = self.row(&table, r, key, row, depth, 1, &mut slots, None);
        self.slots.push(slots);
        self.give_table(table);
        written
    }
}

/// The keys of a one-pass table's inline schemas and of its flattened fields whose shapes
/// are one level of scalars, read once from the plan's shapes so that each row's object is
/// checked against a slice.
struct Shapes<'v> {
    /// Some field is an attachment only.
    attach: bool,
    keys: Vec<&'v str>,
    /// Per field, its keys' range in `keys` (empty for other fields).
    ranges: Vec<(u32, u32)>,
}

impl<'v> Shapes<'v> {
    fn of<N: Node<'v>>(table: &Table<'v, N>) -> Self {
        let mut keys = Vec::new();
        let ranges = (table.fields.iter())
            .map(|field| match (field.form, field.node) {
                (Form::Flat, Some(shape)) if shape.members().all(|(_, v)| !v.is_object()) => {
                    let from = keys.len() as u32;
                    keys.extend(shape.members().map(|(key, _)| key));
                    (from, keys.len() as u32)
                }
                (Form::Inline, Some(schema)) => {
                    let from = keys.len() as u32;
                    keys.extend(schema.members().map(|(key, _)| key));
                    (from, keys.len() as u32)
                }
                _ => (0, 0),
            })
            .collect();
        let attach = table.fields.iter().any(|field| field.form == Form::Attach);
        Shapes {
            attach,
            keys,
            ranges,
        }
    }

    /// Field `c`'s keys, if its shape is one level.
    #[inline]
    fn keys(&self, c: usize) -> Option<&[&'v str]> {
        let (from, to) = self.ranges[c];
        (to > from).then(|| &self.keys[from as usize..to as usize])
    }
}

/// Whether a row whose values, in field order, are `values` has attachments (the
/// writer's `nested`, known before its cells are written).
#[inline]
fn nests<'v, N: Node<'v>>(table: &Table<'v, N>, values: impl Iterator<Item = N>) -> bool {
    values
        .zip(&table.fields)
        .any(|(value, field)| match field.form {
            Form::Attach => true,
            Form::Cells | Form::Inline => !value.is_scalar(),
            Form::Const | Form::Flat | Form::Sparse => false,
        })
}

/// Fills `slots` with each field's value in `row` (`None` where it has none).
fn fill<'v, N: Node<'v>>(table: &Table<'v, N>, row: N, slots: &mut Vec<Option<N>>) {
    slots.clear();
    slots.resize(table.names.len(), None);
    for (pos, (key, value)) in row.members().enumerate() {
        if let Some(c) = table.find(key, pos) {
            slots[c] = Some(value);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Map, Value};

    use super::{encode, Encoder};
    use crate::{EncoderOptions, Spec};

    /// The bytes with every table planned over all its rows first.
    fn planned(value: &Value, opts: &EncoderOptions) -> String {
        let mut encoder = Encoder::new(opts, super::Out::default());
        encoder.one_pass = false;
        encoder.root(value).unwrap();
        encoder.out.into_string()
    }

    fn one_pass(value: &Value, opts: &EncoderOptions) -> String {
        let mut out = String::new();
        encode(value, opts, &mut out).unwrap();
        out
    }

    /// Asserts that `value` is written as planning every table first writes it, and that the
    /// bytes decode back to it.
    fn assert_as_planned(value: &Value, opts: &EncoderOptions, context: &str) {
        let text = one_pass(value, opts);
        assert_eq!(text, planned(value, opts), "{context}");
        let back: Value = crate::DecoderOptions::new()
            .spec(opts.get_spec())
            .from_str(&format!("GCF profile=generic\n{text}"))
            .unwrap();
        assert_eq!(&back, value, "{context}");
    }

    /// A seeded generator of long tables whose rows agree with row 0 until some row, late,
    /// breaks its plan in one way or another.
    fn tables(seed: u64) -> Vec<Value> {
        let mut state = seed;
        let mut next = move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let template = |i: u64| {
            json!({
                "id": i,
                "c": {"name": format!("n{}", i % 3), "tier": "gold"},
                "items": [{"p": i, "q": "x"}, {"p": 1, "q": "y"}],
                "o": {"x": 1, "y": 2, "z": i},
                "env": "prod",
                "k": "a>b",
            })
        };
        let mut out = Vec::new();
        for _ in 0..40 {
            let n = 16 + next(30);
            let constants = next(2) == 0;
            let mut rows: Vec<Value> = (0..n).map(template).collect();
            if !constants {
                // Without constant columns, row 0's plan is the table's unless a row breaks it.
                for row in &mut rows {
                    let row = row.as_object_mut().unwrap();
                    row.remove("env");
                    row.remove("k");
                }
            }
            for _ in 0..next(3) {
                let r = 1 + next(n - 1) as usize;
                let row = rows[r].as_object_mut().unwrap();
                let key = ["id", "c", "items", "o", "env", "k", "new"][next(7) as usize];
                let mutated = match next(8) {
                    0 => Value::Null,
                    1 => json!("text"),
                    2 => json!({"name": 1}),
                    3 => json!([1, 2]),
                    4 => json!([{"p": 1}]),
                    5 => json!({"x": 1, "y": 2}),
                    6 => json!([[1]]),
                    _ => {
                        row.remove(key);
                        continue;
                    }
                };
                row.insert(key.to_owned(), mutated);
            }
            out.push(Value::Array(rows.clone()));
            // The same rows as a keyed map.
            let map: Map<String, Value> = rows
                .into_iter()
                .enumerate()
                .map(|(i, row)| (format!("m{i}"), row))
                .collect();
            out.push(json!({ "m": map, "x": 1 }));
        }
        out
    }

    /// Long tables in the attachments of a long table's rows (one-pass tables inside
    /// one-pass rows), with a row, late, whose shared-schema array breaks the outer plan
    /// after an inner table was written.
    #[test]
    fn nested_one_pass_tables_are_the_planned_ones() {
        let row = |i: usize, misfit: u8| {
            let items = match misfit {
                // A key fewer (written `~` in the schema), a key more (no shared schema).
                1 => json!([{"p": i, "q": "x"}, {"p": 1}]),
                2 => json!([{"p": i, "q": "x"}, {"p": 1, "q": "y", "r": 2}]),
                _ => json!([{"p": i, "q": "x"}, {"p": 1, "q": "y"}]),
            };
            let sub: Vec<Value> = (0..20)
                .map(|j| json!({"a": j, "b": {"c": j % 2, "d": "e"}, "items": [{"k": j}]}))
                .collect();
            // (`z` after `items`: a misfit of `items` must outlast `z`'s own rows.)
            json!({"a": sub.clone(), "id": i, "items": items, "o": {"x": 1, "y": 2, "z": i}, "z": sub})
        };
        for (late, misfit) in [(0, 0), (17, 1), (1, 1), (17, 2), (2, 2)] {
            let rows: Vec<Value> = (0..20)
                .map(|i| row(i, if i == late { misfit } else { 0 }))
                .collect();
            let value = Value::Array(rows);
            for opts in [
                EncoderOptions::new(),
                EncoderOptions::new().spec(Spec::V3_1),
            ] {
                assert_as_planned(&value, &opts, &format!("row {late}: {misfit}"));
            }
        }
    }

    /// Small tables of scalar rows, written from the scalars their plan kept, are the
    /// tables the general writer writes: at the root, as members, items and attachments,
    /// with constant columns, a key with `>`, keys out of row 0's order and values not
    /// scalars.
    #[test]
    fn small_scalar_tables_are_the_planned_ones() {
        let table = |n: usize, twist: usize| {
            let rows: Vec<Value> = (0..n)
                .map(|i| {
                    let mut row = json!({"name": format!("limit-{i}"), "unit": "cpu", "value": i as f64 + 0.5, "on": true});
                    let object = row.as_object_mut().unwrap();
                    match twist {
                        1 if i == n - 1 => {
                            object.insert("value".into(), json!({"x": 1}));
                        }
                        2 if i == n - 1 => {
                            object.remove("unit");
                        }
                        3 => {
                            object.insert("a>b".into(), json!(i));
                        }
                        4 if i == n - 1 => {
                            object.insert("zz".into(), json!(null));
                        }
                        5 => {
                            object.insert("unit".into(), json!(i % 2));
                        }
                        _ => {}
                    }
                    row
                })
                .collect();
            Value::Array(rows)
        };
        for n in [1, 2, 3, 15] {
            for twist in 0..6 {
                let rows = table(n, twist);
                let values = [
                    rows.clone(),
                    json!({"limits": rows.clone(), "x": 1}),
                    json!([rows.clone(), 1]),
                    json!([{"id": 1, "limits": rows.clone()}, {"id": 2, "limits": rows.clone()}]),
                ];
                for value in values {
                    for opts in [
                        EncoderOptions::new(),
                        EncoderOptions::new().spec(Spec::V3_1),
                        EncoderOptions::new().constant_columns(false),
                    ] {
                        assert_as_planned(&value, &opts, &value.to_string());
                    }
                }
            }
        }
    }

    /// A declaration is written again from the last one's text only for the same names and
    /// constants.
    #[test]
    fn repeated_declarations() {
        // Keys in sorted order: the same bytes whether or not serde_json keeps insertion
        // order (the workspace's tests run with `preserve_order` on).
        let value = json!({
            "a": [{"u": "cpu", "x": 1}, {"u": "cpu", "x": 2}],
            "b": [{"u": "mem", "x": 1}, {"u": "mem", "x": 2}],
            "c": [{"u": "mem", "x": 1}, {"u": "gpu", "x": 2}],
            "d": [{"u": "mem", "x": 1}, {"u": "mem", "x": 2}],
            "e": [{"u": "mem", "x": 1}, {"u": "mem", "x": 2}],
            "f": [{"v": "mem", "x": 1}, {"v": "mem", "x": 2}],
        });
        let text = one_pass(&value, &EncoderOptions::new());
        assert_eq!(
            text,
            "## a [2]{u=cpu,x}\n1\n2\n## b [2]{u=mem,x}\n1\n2\n## c [2]{u,x}\nmem|1\ngpu|2\n\
             ## d [2]{u=mem,x}\n1\n2\n## e [2]{u=mem,x}\n1\n2\n## f [2]{v=mem,x}\n1\n2\n"
        );
    }

    #[test]
    fn one_pass_tables_are_the_planned_ones() {
        for opts in [
            EncoderOptions::new(),
            EncoderOptions::new().spec(Spec::V3_1),
            // Columns of cells and attachments alone: rows read and written in one loop.
            EncoderOptions::new()
                .flatten(false)
                .inline_schemas(false)
                .shared_schemas(false),
            EncoderOptions::new()
                .spec(Spec::V3_1)
                .inline_schemas(false)
                .shared_schemas(false),
        ] {
            for seed in 1..6 {
                for value in tables(seed) {
                    assert_as_planned(&value, &opts, &value.to_string());
                }
            }
        }
    }
}
