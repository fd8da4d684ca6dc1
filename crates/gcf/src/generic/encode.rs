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
enum Head<'k> {
    /// The root: `## [N]...`.
    Root,
    /// An object member: `## key [N]...` or `key[N]: ...`.
    Member(&'k str),
    /// An expanded item: `@i [N]...`.
    Item(usize),
    /// A traditional attachment: `.key [N]...`.
    Attachment(&'k str),
}

/// The form §7.3 selects for an array.
enum Form<'t> {
    Empty,
    Primitive,
    Tabular(Columns<'t>),
    Expanded,
}

/// The ordered field union of a tabular array, with what its columns hold.
pub(crate) struct Columns<'t> {
    names: Vec<&'t str>,
    index: Option<HashMap<&'t str, usize>>,
    /// Per column: some row holds an object / an array there.
    objects: Vec<bool>,
    arrays: Vec<bool>,
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
            index: None,
            objects: Vec::new(),
            arrays: Vec::new(),
        }
    }

    /// The column of `key`, trying `hint` first (rows usually list keys in union order).
    #[inline]
    fn find(&self, key: &str, hint: usize) -> Option<usize> {
        if self.names.get(hint) == Some(&key) {
            return Some(hint);
        }
        match &self.index {
            Some(index) => index.get(key).copied(),
            None => self.names.iter().position(|n| *n == key),
        }
    }

    fn add(&mut self, key: &'t str) -> usize {
        let c = self.names.len();
        self.names.push(key);
        self.objects.push(false);
        self.arrays.push(false);
        if let Some(index) = &mut self.index {
            index.insert(key, c);
        } else if self.names.len() > LINEAR_LOOKUP_MAX {
            self.index = Some(
                self.names
                    .iter()
                    .enumerate()
                    .map(|(i, n)| (*n, i))
                    .collect(),
            );
        }
        c
    }
}

/// Sentinel for an empty slot: the row has no such key.
const ABSENT: usize = usize::MAX;

pub(crate) struct Encoder<'t, 'o> {
    tape: &'t Tape,
    opts: &'o EncoderOptions,
    out: &'o mut String,
}

impl<'t, 'o> Encoder<'t, 'o> {
    pub(crate) fn new(tape: &'t Tape, opts: &'o EncoderOptions, out: &'o mut String) -> Self {
        Encoder { tape, opts, out }
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
        const SPACES: &str = "                                                                ";
        let mut n = depth * 2;
        while n > SPACES.len() {
            self.out.push_str(SPACES);
            n -= SPACES.len();
        }
        self.out.push_str(&SPACES[..n]);
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
            let keys: Vec<&str> = tape.members(obj).map(|(k, _)| tape.key(k)).collect();
            (1..keys.len()).find_map(|i| keys[..i].contains(&keys[i]).then_some(keys[i]))
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
    fn classify(&self, arr: usize) -> Result<Form<'t>> {
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
        let mut columns = Columns::new();
        for row in tape.elements(arr) {
            for (pos, (k, v)) in tape.members(row).enumerate() {
                let key = tape.key(k);
                let c = match columns.find(key, pos) {
                    Some(c) => c,
                    None => columns.add(key),
                };
                match tape.tok(v) {
                    Tok::Object { .. } => columns.objects[c] = true,
                    Tok::Array { .. } => columns.arrays[c] = true,
                    _ => {}
                }
            }
        }
        if columns.names.is_empty() {
            // Only empty objects: a zero-column row has no line form.
            return Ok(Form::Expanded);
        }
        Ok(Form::Tabular(columns))
    }

    /// Writes the array at `arr` with its header at `depth` and its body at `body`.
    fn array(&mut self, depth: usize, head: Head<'_>, arr: usize, body: usize) -> Result<()> {
        let form = self.classify(arr)?;
        let tape = self.tape;
        self.indent(depth);
        let n = tape.len(arr);
        if let (Form::Primitive, Head::Member(key)) = (&form, head) {
            // `key[N]: a,b` — the one form without a space before the bracket.
            lex::write_key(self.out, key);
        } else {
            match head {
                Head::Root => self.out.push_str("## "),
                Head::Member(key) => {
                    self.out.push_str("## ");
                    lex::write_key(self.out, key);
                    self.out.push(' ');
                }
                Head::Item(i) => {
                    self.out.push('@');
                    number::write_u64(self.out, i as u64);
                    self.out.push(' ');
                }
                Head::Attachment(key) => {
                    self.out.push('.');
                    lex::write_key(self.out, key);
                    self.out.push(' ');
                }
            }
        }
        self.out.push('[');
        number::write_u64(self.out, n as u64);
        self.out.push(']');
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
                self.rows(arr, &columns, body)
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
    fn fill(&self, row: usize, columns: &Columns<'_>, slots: &mut Vec<usize>) -> Result<()> {
        let tape = self.tape;
        if !matches!(tape.tok(row), Tok::Object { .. }) {
            return Err(Error::new(
                ErrorKind::UnsupportedValue,
                "a table row must be an object (a struct or a map)",
            ));
        }
        slots.clear();
        slots.resize(columns.names.len(), ABSENT);
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
        let mut inline: Vec<Option<Vec<&'t str>>> = vec![None; ncols];
        let mut shared: Vec<bool> = vec![false; ncols];
        for c in 0..ncols {
            if self.opts.inline_schemas && columns.objects[c] {
                inline[c] = self.inline_schema(arr, columns.names[c])?;
            }
            if self.opts.shared_schemas && columns.arrays[c] {
                shared[c] = self.shared_schema(arr, columns.names[c])?;
            }
        }
        let mut slots = Vec::with_capacity(ncols);
        for (r, row) in tape.elements(arr).enumerate() {
            self.row(r, row, columns, depth, &inline, &shared, &mut slots)?;
        }
        Ok(())
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
        shared: &[bool],
        slots: &mut Vec<usize>,
    ) -> Result<()> {
        let tape = self.tape;
        self.fill(row, columns, slots)?;
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
            let shared_array = shared.get(c).copied().unwrap_or(false);
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
                _ if shared_array && r > 0 => self.shared_rows(depth, key, v)?,
                _ => self.array(depth, Head::Attachment(key), v, depth + 2)?,
            }
        }
        Ok(())
    }

    /// `.key [M]` with tabular rows in the column's shared schema (spec §7.4.5.3).
    fn shared_rows(&mut self, depth: usize, key: &str, arr: usize) -> Result<()> {
        let tape = self.tape;
        let Form::Tabular(columns) = self.classify(arr)? else {
            return Err(Error::new(
                ErrorKind::UnsupportedValue,
                "internal: shared schema for a non-tabular array",
            ));
        };
        self.indent(depth);
        self.out.push('.');
        lex::write_key(self.out, key);
        self.out.push_str(" [");
        number::write_u64(self.out, tape.len(arr) as u64);
        self.out.push_str("]\n");
        let mut slots = Vec::with_capacity(columns.names.len());
        for row in tape.elements(arr) {
            self.fill(row, &columns, &mut slots)?;
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
    fn shared_schema(&self, arr: usize, key: &str) -> Result<bool> {
        let tape = self.tape;
        let mut union: Option<Vec<&'t str>> = None;
        for (r, row) in tape.elements(arr).enumerate() {
            let v = match self.get(row, key) {
                Some(v) if tape.tok(v) != Tok::Null => v,
                _ if r == 0 => return Ok(false),
                _ => continue,
            };
            if !matches!(tape.tok(v), Tok::Array { .. }) {
                return Ok(false);
            }
            let Form::Tabular(columns) = self.classify(v)? else {
                return Ok(false);
            };
            if !tape.elements(v).all(|item| self.all_scalar_members(item)) {
                return Ok(false);
            }
            match &union {
                None => union = Some(columns.names),
                Some(first) if *first == columns.names => {}
                Some(_) => return Ok(false),
            }
        }
        Ok(union.is_some())
    }
}

#[cold]
fn duplicate_key(key: &str) -> Error {
    Error::new(
        ErrorKind::DuplicateKey,
        format!("key {key:?} appears twice in one object"),
    )
}
