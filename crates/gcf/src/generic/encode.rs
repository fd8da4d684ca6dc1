//! The buffered generic-profile encoder (spec §7): walks a [`Tape`] and writes the canonical
//! v3.1 bytes — key/value lines, `## key` sections, the four array forms chosen by §7.3,
//! tabular rows with `~`/`-`/`^` cells, attachments at row level with bodies two levels deeper
//! (as the reference encoder and the v3.1.0 fixtures have them), inline object schemas and
//! shared array schemas.

use std::collections::HashMap;

use super::tape::{Tape, Tok};
use crate::error::{Error, ErrorKind, Result};
use crate::lex;
use crate::number;
use crate::options::EncoderOptions;

/// Above this many fields, tabular columns are found through a hash map.
const LINEAR_LOOKUP_MAX: usize = 12;

/// Where an array is written; decides its header spelling.
#[derive(Debug, Clone, Copy)]
pub(super) enum Head<'k> {
    /// The root: `## [N]...`.
    Root,
    /// An object member: `## key [N]...` or `key[N]: ...`.
    Member(&'k str),
    /// An expanded item: `@i [N]...`.
    Item(usize),
    /// A traditional attachment: `.key [N]...`.
    Attachment(&'k str),
}

impl Head<'_> {
    /// Writes an array's header at `depth` up to its `]`: `## [N]`, `## key [N]` (or, for a
    /// `primitive` array, the inline form `key[N]`, the one without a space before the
    /// bracket), `@i [N]`, `.key [N]`.
    pub(super) fn write(self, out: &mut String, depth: usize, primitive: bool, len: usize) {
        lex::indent(out, depth);
        match self {
            Head::Member(key) if primitive => lex::write_key(out, key),
            Head::Root => out.push_str("## "),
            Head::Member(key) => {
                out.push_str("## ");
                lex::write_key(out, key);
                out.push(' ');
            }
            Head::Item(i) => {
                out.push('@');
                number::write_u64(out, i as u64);
                out.push(' ');
            }
            Head::Attachment(key) => {
                out.push('.');
                lex::write_key(out, key);
                out.push(' ');
            }
        }
        out.push('[');
        number::write_u64(out, len as u64);
        out.push(']');
    }
}

/// The form §7.3 selects for an array.
enum Form<'t> {
    Empty,
    Primitive,
    Tabular(Columns<'t>),
    Expanded,
}

/// The ordered field union of a tabular array, with what its columns hold (for this
/// encoder and the value encoder).
pub(crate) struct Columns<'t> {
    pub(super) names: Vec<&'t str>,
    index: ColumnIndex<'t>,
    /// Per column: some row holds an object / an array there.
    pub(super) objects: Vec<bool>,
    pub(super) arrays: Vec<bool>,
    /// The column of every member of every row, in order (when computed by `classify`), so
    /// rows are matched to columns without comparing keys a second time.
    member_columns: Vec<u32>,
    /// Every row has exactly the columns, in their order (kept by the value encoder).
    pub(super) aligned: bool,
}

impl Default for Columns<'_> {
    fn default() -> Self {
        Columns::new()
    }
}

impl<'t> Columns<'t> {
    /// Declared columns (for streaming tables); duplicates are the caller's to reject.
    pub(crate) fn from_names(names: &[&'t str]) -> Self {
        let mut columns = Columns::new();
        for name in names {
            columns.add(name);
        }
        columns
    }

    fn new() -> Self {
        Columns {
            names: Vec::new(),
            index: ColumnIndex::default(),
            objects: Vec::new(),
            arrays: Vec::new(),
            member_columns: Vec::new(),
            aligned: true,
        }
    }

    /// Empties the columns for reuse, keeping the allocations.
    pub(super) fn clear(&mut self) {
        self.names.clear();
        self.index.clear();
        self.objects.clear();
        self.arrays.clear();
        self.member_columns.clear();
        self.aligned = true;
    }

    /// The column of `key`, trying `hint` first (rows usually list keys in union order).
    #[inline]
    pub(super) fn find(&self, key: &str, hint: usize) -> Option<usize> {
        self.index.find(&self.names, key, hint)
    }

    pub(super) fn add(&mut self, key: &'t str) -> usize {
        let c = self.names.len();
        self.names.push(key);
        self.objects.push(false);
        self.arrays.push(false);
        self.index.added(&self.names);
        c
    }
}

/// Finds the columns of a table by name: a linear search while there are few, a hash map
/// after.
#[derive(Debug, Default)]
pub(super) struct ColumnIndex<'t>(Option<HashMap<&'t str, usize>>);

impl<'t> ColumnIndex<'t> {
    /// The column of `key` among `names`, trying `hint` first (rows usually list keys in
    /// column order).
    #[inline]
    pub(super) fn find(&self, names: &[&'t str], key: &str, hint: usize) -> Option<usize> {
        if names.get(hint).is_some_and(|name| key_eq(name, key)) {
            return Some(hint);
        }
        match &self.0 {
            Some(index) => index.get(key).copied(),
            None => names.iter().position(|n| *n == key),
        }
    }

    /// Takes note of the name just pushed onto `names`.
    pub(super) fn added(&mut self, names: &[&'t str]) {
        let (Some(&key), c) = (names.last(), names.len().wrapping_sub(1)) else {
            return;
        };
        if let Some(index) = &mut self.0 {
            index.insert(key, c);
        } else if names.len() > LINEAR_LOOKUP_MAX {
            self.0 = Some(names.iter().enumerate().map(|(i, n)| (*n, i)).collect());
        }
    }

    pub(super) fn clear(&mut self) {
        self.0 = None;
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

/// Sentinel for an empty slot: the row has no such key.
const ABSENT: usize = usize::MAX;

pub(crate) struct Encoder<'t, 'o> {
    tape: &'t Tape<'t>,
    opts: &'o EncoderOptions,
    out: &'o mut String,
    /// Column sets no longer in use, kept to save their allocations (nested tabular arrays
    /// are classified row after row).
    spare: Vec<Columns<'t>>,
    /// Slot buffers no longer in use.
    spare_slots: Vec<Vec<usize>>,
}

impl<'t, 'o> Encoder<'t, 'o> {
    pub(crate) fn new(tape: &'t Tape<'t>, opts: &'o EncoderOptions, out: &'o mut String) -> Self {
        Encoder {
            tape,
            opts,
            out,
            spare: Vec::new(),
            spare_slots: Vec::new(),
        }
    }

    fn take_columns(&mut self) -> Columns<'t> {
        match self.spare.pop() {
            Some(mut columns) => {
                columns.clear();
                columns
            }
            None => Columns::new(),
        }
    }

    fn give_columns(&mut self, columns: Columns<'t>) {
        if self.spare.len() < 16 {
            self.spare.push(columns);
        }
    }

    /// Writes the body for the value at the root of the tape (the header is the caller's).
    pub(crate) fn root(&mut self) -> Result<()> {
        if self.tape.toks.is_empty() {
            return Ok(());
        }
        match self.tape.tok(0) {
            Tok::Object { .. } => self.members(0, 0),
            Tok::Array { .. } => self.array(0, Head::Root, 0, 0),
            _ => {
                self.out.push('=');
                self.scalar(0)?;
                self.out.push('\n');
                Ok(())
            }
        }
    }

    /// Writes one member `key: value` of an object at `depth` (used by the stream encoder).
    pub(crate) fn member(&mut self, key: &str, value: usize, depth: usize) -> Result<()> {
        let tape = self.tape;
        match tape.tok(value) {
            Tok::Object { .. } => {
                self.indent(depth);
                self.out.push_str("## ");
                lex::write_key(self.out, key);
                self.out.push('\n');
                self.members(value, depth + 1)
            }
            Tok::Array { .. } => self.array(depth, Head::Member(key), value, depth),
            _ => {
                self.indent(depth);
                lex::write_key(self.out, key);
                self.out.push('=');
                self.scalar(value)?;
                self.out.push('\n');
                Ok(())
            }
        }
    }

    #[inline]
    pub(crate) fn indent(&mut self, depth: usize) {
        lex::indent(self.out, depth);
    }

    fn scalar(&mut self, i: usize) -> Result<()> {
        match self.tape.tok(i) {
            Tok::Null => self.out.push('-'),
            Tok::Bool(true) => self.out.push_str("true"),
            Tok::Bool(false) => self.out.push_str("false"),
            Tok::U64(v) => number::write_u64(self.out, v),
            Tok::I64(v) => number::write_i64(self.out, v),
            Tok::F64(v) => number::write_f64(self.out, v)?,
            Tok::F32(v) => number::write_f32(self.out, v)?,
            Tok::Num(span) => number::write_lexeme(self.out, self.tape.span(span))?,
            Tok::Str(span) => lex::write_str(self.out, self.tape.span(span)),
            Tok::Ref(index) => lex::write_str(self.out, self.tape.reference(index)),
            Tok::Array { .. } | Tok::Object { .. } => {
                return Err(Error::new(
                    ErrorKind::UnsupportedValue,
                    "internal: a container where a scalar was expected",
                ))
            }
        }
        Ok(())
    }

    /// Rejects an object with a repeated key (spec §2a.2: encoders must not emit one).
    fn check_unique(&self, obj: usize) -> Result<()> {
        let tape = self.tape;
        let n = tape.len(obj);
        if n < 2 {
            return Ok(());
        }
        let duplicate = if n <= 16 {
            // Small objects: pairwise, without allocating.
            let mut keys: [&str; 16] = [""; 16];
            let mut found = None;
            for (i, (k, _)) in tape.members(obj).enumerate() {
                let key = tape.key(k);
                if keys[..i].iter().any(|seen| key_eq(seen, key)) {
                    found = Some(key);
                    break;
                }
                keys[i] = key;
            }
            found
        } else {
            let mut seen = std::collections::HashSet::with_capacity(n);
            tape.members(obj)
                .map(|(k, _)| tape.key(k))
                .find(|k| !seen.insert(*k))
        };
        match duplicate {
            Some(key) => Err(duplicate_key(key)),
            None => Ok(()),
        }
    }

    fn members(&mut self, obj: usize, depth: usize) -> Result<()> {
        self.check_unique(obj)?;
        let tape = self.tape;
        for (k, v) in tape.members(obj) {
            let key = tape.key(k);
            match tape.tok(v) {
                Tok::Object { .. } => {
                    self.indent(depth);
                    self.out.push_str("## ");
                    lex::write_key(self.out, key);
                    self.out.push('\n');
                    self.members(v, depth + 1)?;
                }
                Tok::Array { .. } => self.array(depth, Head::Member(key), v, depth)?,
                _ => {
                    self.indent(depth);
                    lex::write_key(self.out, key);
                    self.out.push('=');
                    self.scalar(v)?;
                    self.out.push('\n');
                }
            }
        }
        Ok(())
    }

    /// Selects the form of the array at `arr` (spec §7.3), computing the field union of a
    /// tabular array over all its elements.
    fn classify(&mut self, arr: usize) -> Result<Form<'t>> {
        let tape = self.tape;
        if tape.len(arr) == 0 {
            return Ok(Form::Empty);
        }
        let mut scalars = 0;
        let mut objects = 0;
        for e in tape.elements(arr) {
            match tape.tok(e) {
                Tok::Object { .. } => objects += 1,
                Tok::Array { .. } => return Ok(Form::Expanded),
                _ => scalars += 1,
            }
            if scalars > 0 && objects > 0 {
                return Ok(Form::Expanded);
            }
        }
        if objects == 0 {
            return Ok(Form::Primitive);
        }
        let mut columns = self.take_columns();
        for row in tape.elements(arr) {
            for (pos, (k, v)) in tape.members(row).enumerate() {
                let key = tape.key(k);
                let c = match columns.find(key, pos) {
                    Some(c) => c,
                    None => columns.add(key),
                };
                columns.member_columns.push(c as u32);
                match tape.tok(v) {
                    Tok::Object { .. } => columns.objects[c] = true,
                    Tok::Array { .. } => columns.arrays[c] = true,
                    _ => {}
                }
            }
        }
        if columns.names.is_empty() {
            // Only empty objects: a zero-column row has no line form.
            self.give_columns(columns);
            return Ok(Form::Expanded);
        }
        Ok(Form::Tabular(columns))
    }

    /// Writes the array at `arr` with its header at `depth` and its body at `body`.
    fn array(&mut self, depth: usize, head: Head<'_>, arr: usize, body: usize) -> Result<()> {
        let form = self.classify(arr)?;
        let tape = self.tape;
        let n = tape.len(arr);
        head.write(self.out, depth, matches!(form, Form::Primitive), n);
        match form {
            Form::Empty => {
                self.out.push('\n');
                Ok(())
            }
            Form::Primitive => {
                self.out.push_str(": ");
                for (j, e) in tape.elements(arr).enumerate() {
                    if j > 0 {
                        self.out.push(',');
                    }
                    self.scalar(e)?;
                }
                self.out.push('\n');
                Ok(())
            }
            Form::Tabular(columns) => {
                self.field_decl(&columns.names);
                self.out.push('\n');
                let written = self.rows(arr, &columns, body);
                self.give_columns(columns);
                written
            }
            Form::Expanded => {
                self.out.push('\n');
                self.items(arr, body)
            }
        }
    }

    pub(crate) fn field_decl(&mut self, names: &[&str]) {
        self.out.push('{');
        for (j, name) in names.iter().enumerate() {
            if j > 0 {
                self.out.push(',');
            }
            lex::write_key(self.out, name);
        }
        self.out.push('}');
    }

    fn items(&mut self, arr: usize, depth: usize) -> Result<()> {
        let tape = self.tape;
        for (idx, e) in tape.elements(arr).enumerate() {
            self.item(idx, e, depth)?;
        }
        Ok(())
    }

    /// Writes expanded item `idx` (the value at `e`) at `depth`.
    pub(crate) fn item(&mut self, idx: usize, e: usize, depth: usize) -> Result<()> {
        match self.tape.tok(e) {
            Tok::Object { .. } => {
                self.indent(depth);
                self.out.push('@');
                number::write_u64(self.out, idx as u64);
                self.out.push_str(" {}\n");
                self.members(e, depth + 1)
            }
            Tok::Array { .. } => self.array(depth, Head::Item(idx), e, depth + 1),
            _ => {
                self.indent(depth);
                self.out.push('@');
                number::write_u64(self.out, idx as u64);
                self.out.push_str(" =");
                self.scalar(e)?;
                self.out.push('\n');
                Ok(())
            }
        }
    }

    /// Fills `slots` with the value index of each column of `row` ([`ABSENT`] when missing).
    /// `mapped` is the position of the row's first member in `columns.member_columns`, when
    /// the columns were computed over these rows.
    fn fill(
        &self,
        row: usize,
        columns: &Columns<'_>,
        slots: &mut Vec<usize>,
        mapped: Option<&mut usize>,
    ) -> Result<()> {
        let tape = self.tape;
        if !matches!(tape.tok(row), Tok::Object { .. }) {
            return Err(Error::new(
                ErrorKind::UnsupportedValue,
                "a table row must be an object (a struct or a map)",
            ));
        }
        slots.clear();
        slots.resize(columns.names.len(), ABSENT);
        if let Some(at) = mapped {
            for (k, v) in tape.members(row) {
                let c = columns.member_columns.get(*at).map_or(0, |&c| c as usize);
                *at += 1;
                if slots[c] != ABSENT {
                    return Err(duplicate_key(tape.key(k)));
                }
                slots[c] = v;
            }
            return Ok(());
        }
        for (pos, (k, v)) in tape.members(row).enumerate() {
            let key = tape.key(k);
            let Some(c) = columns.find(key, pos) else {
                return Err(Error::new(
                    ErrorKind::UnsupportedValue,
                    format!(
                        "key {key:?} is not a declared field of the table (a streaming table \
                         needs its complete field list up front, spec §8.3)"
                    ),
                ));
            };
            if slots[c] != ABSENT {
                return Err(duplicate_key(key));
            }
            slots[c] = v;
        }
        Ok(())
    }

    fn rows(&mut self, arr: usize, columns: &Columns<'t>, depth: usize) -> Result<()> {
        let tape = self.tape;
        let ncols = columns.names.len();
        let mut inline: Vec<Option<Vec<&'t str>>> = Vec::new();
        let mut shared: Vec<Option<Columns<'t>>> = Vec::new();
        for c in 0..ncols {
            if self.opts.inline_schemas && columns.objects[c] {
                if let Some(keys) = self.inline_schema(arr, columns.names[c])? {
                    inline.resize_with(ncols, || None);
                    inline[c] = Some(keys);
                }
            }
            if self.opts.shared_schemas && columns.arrays[c] {
                if let Some(schema) = self.shared_schema(arr, columns.names[c])? {
                    shared.resize_with(ncols, || None);
                    shared[c] = Some(schema);
                }
            }
        }
        let mut slots = self.spare_slots.pop().unwrap_or_default();
        let mut mapped = 0;
        let mut written = Ok(());
        for (r, row) in tape.elements(arr).enumerate() {
            written = self.row(
                r,
                row,
                columns,
                depth,
                &inline,
                &shared,
                &mut slots,
                Some(&mut mapped),
            );
            if written.is_err() {
                break;
            }
        }
        for schema in shared.into_iter().flatten() {
            self.give_columns(schema);
        }
        if self.spare_slots.len() < 16 {
            self.spare_slots.push(slots);
        }
        written
    }

    /// Writes row `r` (the object at `row`) of a tabular array whose rows are at `depth`, and
    /// its attachments.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn row(
        &mut self,
        r: usize,
        row: usize,
        columns: &Columns<'_>,
        depth: usize,
        inline: &[Option<Vec<&str>>],
        shared: &[Option<Columns<'_>>],
        slots: &mut Vec<usize>,
        mapped: Option<&mut usize>,
    ) -> Result<()> {
        let tape = self.tape;
        self.fill(row, columns, slots, mapped)?;
        let nested = slots.iter().any(|&v| v != ABSENT && !tape.is_scalar(v));
        self.indent(depth);
        if nested {
            self.out.push('@');
            number::write_u64(self.out, r as u64);
            self.out.push(' ');
        }
        for (c, &v) in slots.iter().enumerate() {
            if c > 0 {
                self.out.push('|');
            }
            if v == ABSENT {
                self.out.push('~');
            } else if tape.is_scalar(v) {
                self.scalar(v)?;
            } else {
                self.out.push('^');
                if r == 0 {
                    if let (Some(Some(keys)), Tok::Object { .. }) = (inline.get(c), tape.tok(v)) {
                        self.field_decl(keys);
                    }
                }
            }
        }
        self.out.push('\n');
        if !nested {
            return Ok(());
        }
        for (c, &v) in slots.iter().enumerate() {
            if v == ABSENT || tape.is_scalar(v) {
                continue;
            }
            let key = columns.names[c];
            let inline_object = matches!(inline.get(c), Some(Some(_)));
            let shared_array = shared.get(c).and_then(Option::as_ref);
            match tape.tok(v) {
                Tok::Object { .. } if inline_object => {
                    // A positional body at the row's indentation.
                    self.indent(depth);
                    for (j, (_, value)) in tape.members(v).enumerate() {
                        if j > 0 {
                            self.out.push('|');
                        }
                        self.scalar(value)?;
                    }
                    self.out.push('\n');
                }
                Tok::Object { .. } => {
                    self.indent(depth);
                    self.out.push('.');
                    lex::write_key(self.out, key);
                    self.out.push_str(" {}\n");
                    self.members(v, depth + 2)?;
                }
                _ if r > 0 && shared_array.is_some() => {
                    if let Some(schema) = shared_array {
                        self.shared_rows(depth, key, v, schema)?;
                    }
                }
                _ => self.array(depth, Head::Attachment(key), v, depth + 2)?,
            }
        }
        Ok(())
    }

    /// `.key [M]` with tabular rows in the column's shared schema (spec §7.4.5.3).
    fn shared_rows(
        &mut self,
        depth: usize,
        key: &str,
        arr: usize,
        schema: &Columns<'_>,
    ) -> Result<()> {
        let tape = self.tape;
        self.indent(depth);
        self.out.push('.');
        lex::write_key(self.out, key);
        self.out.push_str(" [");
        number::write_u64(self.out, tape.len(arr) as u64);
        self.out.push_str("]\n");
        let mut slots = self.spare_slots.pop().unwrap_or_default();
        for row in tape.elements(arr) {
            self.fill(row, schema, &mut slots, None)?;
            self.indent(depth + 2);
            for (c, &v) in slots.iter().enumerate() {
                if c > 0 {
                    self.out.push('|');
                }
                if v == ABSENT {
                    self.out.push('~');
                } else {
                    self.scalar(v)?;
                }
            }
            self.out.push('\n');
        }
        if self.spare_slots.len() < 16 {
            self.spare_slots.push(slots);
        }
        Ok(())
    }

    /// The value of `key` in the object at `obj`.
    fn get(&self, obj: usize, key: &str) -> Option<usize> {
        let tape = self.tape;
        tape.members(obj)
            .find(|&(k, _)| tape.key(k) == key)
            .map(|(_, v)| v)
    }

    fn all_scalar_members(&self, obj: usize) -> bool {
        self.tape.members(obj).all(|(_, v)| self.tape.is_scalar(v))
    }

    /// The inline object schema of column `key` (spec §7.4.5.1, as the reference applies it):
    /// row 0 holds an object there; every row where the column is present and not null holds
    /// an object of scalars with the same keys in the same order; at least three keys. Rows
    /// holding null keep `-` (the spec text would disqualify the column; the reference does
    /// not).
    fn inline_schema(&self, arr: usize, key: &str) -> Result<Option<Vec<&'t str>>> {
        let tape = self.tape;
        let mut schema: Option<usize> = None;
        for (r, row) in tape.elements(arr).enumerate() {
            let v = match self.get(row, key) {
                Some(v) if tape.tok(v) != Tok::Null => v,
                _ if r == 0 => return Ok(None),
                _ => continue,
            };
            if !matches!(tape.tok(v), Tok::Object { .. }) || !self.all_scalar_members(v) {
                return Ok(None);
            }
            match schema {
                None => schema = Some(v),
                Some(first) => {
                    if tape.len(first) != tape.len(v)
                        || !tape
                            .members(first)
                            .zip(tape.members(v))
                            .all(|((a, _), (b, _))| tape.key(a) == tape.key(b))
                    {
                        return Ok(None);
                    }
                }
            }
        }
        let Some(first) = schema else {
            return Ok(None);
        };
        if tape.len(first) < 3 {
            return Ok(None);
        }
        self.check_unique(first)?;
        Ok(Some(
            tape.members(first).map(|(k, _)| tape.key(k)).collect(),
        ))
    }

    /// Whether column `key` gets a shared array schema (spec §7.4.5.3, as the reference
    /// applies it): row 0 holds an array there; every row where the column is present and not
    /// null holds a non-empty array of objects of scalars, all with the same field union.
    fn shared_schema(&mut self, arr: usize, key: &str) -> Result<Option<Columns<'t>>> {
        let tape = self.tape;
        let mut union: Option<Columns<'t>> = None;
        for (r, row) in tape.elements(arr).enumerate() {
            let v = match self.get(row, key) {
                Some(v) if tape.tok(v) != Tok::Null => v,
                _ if r == 0 => return Ok(None),
                _ => continue,
            };
            let form = if matches!(tape.tok(v), Tok::Array { .. }) {
                self.classify(v)?
            } else {
                Form::Expanded
            };
            let Form::Tabular(columns) = form else {
                if let Some(first) = union {
                    self.give_columns(first);
                }
                return Ok(None);
            };
            let scalar = tape.elements(v).all(|item| self.all_scalar_members(item));
            let same = union
                .as_ref()
                .is_none_or(|first| first.names == columns.names);
            if !scalar || !same {
                self.give_columns(columns);
                if let Some(first) = union {
                    self.give_columns(first);
                }
                return Ok(None);
            }
            match union {
                None => union = Some(columns),
                Some(_) => self.give_columns(columns),
            }
        }
        Ok(union)
    }
}

#[cold]
fn duplicate_key(key: &str) -> Error {
    Error::new(
        ErrorKind::DuplicateKey,
        format!("key {key:?} appears twice in one object"),
    )
}
