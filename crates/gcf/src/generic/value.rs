//! The encoder of a `serde_json::Value` read in place: what `to_string` runs when the value
//! it is given is a `serde_json::Value`.
//!
//! It makes the decisions of the tape encoder ([`super::encode`]: the array forms of §7.3,
//! the ordered field union of a table, inline object schemas and shared array schemas) by
//! reading the value where it is, with no tape and no serde calls in between, and it skips
//! the duplicate-key checks, since the keys of a `serde_json::Map` are unique.
//!
//! A table is first written in one pass ([`Walker::guessed_table`]), on the guess that every
//! row has row 0's keys in row 0's order and that each column takes the schema row 0
//! suggests; the rows are checked as they are written, and a row that proves the guess wrong
//! sends the table, truncated, through [`Walker::classify`], which reads every row first.
//! Anything past the depth limit ends the walk with an error; the caller then encodes the
//! value through the tape, which reports it. The bytes are those of the tape encoder: the
//! tests compare the two.

use serde_json::{Map, Number, Value};

use super::encode::{Columns, Head};
use crate::error::{Error, ErrorKind, Result};
use crate::lex::{self, indent, write_key};
use crate::number;
use crate::options::EncoderOptions;

/// Appends the GCF body of `value` to `out`; an error means the caller must take the tape.
pub(crate) fn write(value: &Value, opts: &EncoderOptions, out: &mut String) -> Result<()> {
    let mut walker = Walker {
        opts,
        out: std::mem::take(out),
        spare: Vec::new(),
        slots: Vec::new(),
        guesses: Vec::new(),
    };
    let written = match value {
        Value::Object(members) => walker.enter(0).and_then(|()| walker.members(members, 0, 0)),
        Value::Array(items) => walker.array(0, Head::Root, items, 0, 0),
        _ => {
            walker.out.push('=');
            let written = scalar(&mut walker.out, value);
            walker.out.push('\n');
            written
        }
    };
    *out = walker.out;
    written
}

/// The walk stops (the caller encodes through the tape, which says why).
#[cold]
fn stop() -> Error {
    Error::new(
        ErrorKind::UnsupportedValue,
        "internal: encoded through the tape",
    )
}

/// Writes a scalar.
#[inline(always)]
fn scalar(out: &mut String, value: &Value) -> Result<()> {
    match value {
        Value::String(s) => lex::write_str(out, s),
        Value::Number(n) => write_number(out, n)?,
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Null => out.push('-'),
        Value::Array(_) | Value::Object(_) => return Err(stop()),
    }
    Ok(())
}

/// Writes a number: with serde_json's `arbitrary_precision`, from its lexeme (every digit,
/// and the sign of `-0`), as the serde path has it.
fn write_number(out: &mut String, n: &Number) -> Result<()> {
    if super::arbitrary_precision() {
        number::write_lexeme(out, &n.to_string())?;
    } else if let Some(v) = n.as_u64() {
        number::write_u64(out, v);
    } else if let Some(v) = n.as_i64() {
        number::write_i64(out, v);
    } else {
        number::write_f64(out, n.as_f64().unwrap_or(f64::NAN))?;
    }
    Ok(())
}

fn is_scalar(value: &Value) -> bool {
    !matches!(value, Value::Array(_) | Value::Object(_))
}

fn all_scalar_members(object: &Map<String, Value>) -> bool {
    object.values().all(is_scalar)
}

/// The form §7.3 selects for an array.
enum Form<'v> {
    Empty,
    Primitive,
    Tabular(Columns<'v>),
    Expanded,
}

/// What a table column holds beyond scalars.
enum Schema<'v> {
    None,
    /// An inline object schema: the keys of row 0's object.
    Inline(&'v Map<String, Value>),
    /// A shared array schema.
    Shared(Columns<'v>),
}

/// What a column of a guessed table takes, by row 0.
#[derive(Debug, Clone, Copy)]
enum Guess {
    /// Scalars, and attachments of any kind.
    Plain,
    /// An inline object schema: the keys of row 0's object.
    Inline(Keys),
    /// A shared array schema: the keys of the first row of row 0's array.
    Shared(Keys),
}

/// Where a schema's keys are in a guessed table's list of names: a slice of a `Vec`, which
/// each row reads in step with its members, where walking the schema's map again cost a
/// tree walk per row.
#[derive(Debug, Clone, Copy)]
struct Keys {
    start: usize,
    end: usize,
}

impl Keys {
    /// Appends `object`'s keys to `names` and says where they are.
    fn push<'v>(names: &mut Vec<&'v str>, object: &'v Map<String, Value>) -> Keys {
        let start = names.len();
        names.extend(object.keys().map(String::as_str));
        Keys {
            start,
            end: names.len(),
        }
    }

    fn of<'n, 'v>(self, names: &'n [&'v str]) -> &'n [&'v str] {
        &names[self.start..self.end]
    }
}

impl Guess {
    /// Whether a later row's `value` may keep the column's schema: the kind and size that
    /// the schema needs. The keys and scalars of each object are checked as it is written
    /// ([`Walker::keyed_row`]), which reads a map once where a separate check read it twice
    /// more (a `BTreeMap` is a tree to walk).
    #[inline]
    fn admits(&self, value: &Value) -> bool {
        match (self, value) {
            (Guess::Plain, _) | (_, Value::Null) => true,
            (Guess::Inline(keys), Value::Object(object)) => object.len() == keys.end - keys.start,
            (Guess::Shared(_), Value::Array(rows)) => !rows.is_empty(),
            _ => false,
        }
    }
}

/// The same keys in the same order.
#[inline]
fn same_keys(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
    a.len() == b.len()
        && a.keys()
            .zip(b.keys())
            .all(|(x, y)| super::encode::key_eq(x, y))
}

/// Whether an array is a non-empty table of scalar rows (what a shared array schema needs):
/// `None` if not, `Some(Some(row 0))` if every row has row 0's keys in order, `Some(None)`
/// if its field union must be computed.
fn shared_candidate(rows: &[Value]) -> Option<Option<&Map<String, Value>>> {
    let Some(Value::Object(first)) = rows.first() else {
        return None;
    };
    let mut aligned = !first.is_empty();
    for row in rows {
        let Value::Object(row) = row else {
            return None;
        };
        if !all_scalar_members(row) {
            return None;
        }
        aligned = aligned && same_keys(first, row);
    }
    Some(aligned.then_some(first))
}

struct Walker<'v, 'o> {
    opts: &'o EncoderOptions,
    /// The output, owned for the walk (taken from the caller's and handed back), so that
    /// each write reaches it through one reference less.
    out: String,
    /// Column sets no longer in use, kept for their allocations.
    spare: Vec<Columns<'v>>,
    /// Slot buffers no longer in use.
    slots: Vec<Vec<Option<&'v Value>>>,
    /// Guess buffers no longer in use, with their lists of names.
    guesses: Vec<(Vec<Guess>, Vec<&'v str>)>,
}

impl<'v> Walker<'v, '_> {
    /// A container at nesting `level` (the root's is 0), within the depth limit.
    #[inline]
    fn enter(&self, level: usize) -> Result<()> {
        if level >= self.opts.max_depth {
            return Err(stop());
        }
        Ok(())
    }

    fn take_columns(&mut self) -> Columns<'v> {
        let mut columns = self.spare.pop().unwrap_or_default();
        columns.clear();
        columns
    }

    fn give_columns(&mut self, columns: Columns<'v>) {
        if self.spare.len() < 16 {
            self.spare.push(columns);
        }
    }

    fn take_slots(&mut self) -> Vec<Option<&'v Value>> {
        self.slots.pop().unwrap_or_default()
    }

    fn give_slots(&mut self, slots: Vec<Option<&'v Value>>) {
        if self.slots.len() < 16 {
            self.slots.push(slots);
        }
    }

    /// The members of an object (at nesting `level`) at `depth`.
    fn members(
        &mut self,
        object: &'v Map<String, Value>,
        depth: usize,
        level: usize,
    ) -> Result<()> {
        for (key, value) in object {
            match value {
                Value::Object(inner) => {
                    self.enter(level + 1)?;
                    indent(&mut self.out, depth);
                    self.out.push_str("## ");
                    write_key(&mut self.out, key);
                    self.out.push('\n');
                    self.members(inner, depth + 1, level + 1)?;
                }
                Value::Array(items) if items.first().is_some_and(is_scalar) => {
                    // Most often an inline primitive array, `key[N]: a,b`: written here, as
                    // `array` would, without its dispatch on the header's kind.
                    self.enter(level + 1)?;
                    let mark = self.out.len();
                    indent(&mut self.out, depth);
                    write_key(&mut self.out, key);
                    self.out.push('[');
                    number::write_u64(&mut self.out, items.len() as u64);
                    self.out.push_str("]: ");
                    if !self.primitive_items(items)? {
                        self.out.truncate(mark);
                        self.classified(depth, Head::Member(key), items, depth, level + 1)?;
                    }
                }
                Value::Array(items) => {
                    self.array(depth, Head::Member(key), items, depth, level + 1)?;
                }
                _ => {
                    indent(&mut self.out, depth);
                    write_key(&mut self.out, key);
                    self.out.push('=');
                    scalar(&mut self.out, value)?;
                    self.out.push('\n');
                }
            }
        }
        Ok(())
    }

    /// Selects the form of an array (spec §7.3), with the field union of a table.
    fn classify(&mut self, items: &'v [Value]) -> Form<'v> {
        if items.is_empty() {
            return Form::Empty;
        }
        let mut scalars = false;
        let mut objects = false;
        for item in items {
            match item {
                Value::Object(_) => objects = true,
                Value::Array(_) => return Form::Expanded,
                _ => scalars = true,
            }
            if scalars && objects {
                return Form::Expanded;
            }
        }
        if !objects {
            return Form::Primitive;
        }
        let mut columns = self.take_columns();
        let mut lengths = None;
        for item in items {
            let Value::Object(row) = item else {
                continue;
            };
            if *lengths.get_or_insert(row.len()) != row.len() {
                columns.aligned = false;
            }
            for (pos, (key, value)) in row.iter().enumerate() {
                let c = match columns.find(key, pos) {
                    Some(c) => c,
                    None => columns.add(key),
                };
                if c != pos {
                    columns.aligned = false;
                }
                match value {
                    Value::Object(_) => columns.objects[c] = true,
                    Value::Array(_) => columns.arrays[c] = true,
                    _ => {}
                }
            }
        }
        if lengths != Some(columns.names.len()) {
            columns.aligned = false;
        }
        if columns.names.is_empty() {
            // Only empty objects: a zero-column row has no line form.
            self.give_columns(columns);
            return Form::Expanded;
        }
        Form::Tabular(columns)
    }

    /// Writes an array (at nesting `level`) with its header at `depth` and its body at
    /// `body`.
    fn array(
        &mut self,
        depth: usize,
        head: Head<'_>,
        items: &'v [Value],
        body: usize,
        level: usize,
    ) -> Result<()> {
        self.enter(level)?;
        let mark = self.out.len();
        match items.first() {
            Some(Value::Object(_)) => {
                // Most tables confirm the guess that their columns are row 0's keys: one pass.
                if self.guessed_table(depth, head, items, body, level)? {
                    return Ok(());
                }
                self.out.truncate(mark);
            }
            Some(Value::Array(_)) | None => {}
            Some(_) => {
                // An array whose first element is a scalar is most often all scalars.
                self.header(depth, head, &Form::Primitive, items.len());
                self.out.push_str(": ");
                if self.primitive_items(items)? {
                    return Ok(());
                }
                self.out.truncate(mark);
            }
        }
        self.classified(depth, head, items, body, level)
    }

    /// Writes an array as [`Walker::array`] does, in the form [`Walker::classify`] selects
    /// (what `array` falls back on when its guess fails).
    fn classified(
        &mut self,
        depth: usize,
        head: Head<'_>,
        items: &'v [Value],
        body: usize,
        level: usize,
    ) -> Result<()> {
        let form = self.classify(items);
        self.header(depth, head, &form, items.len());
        match form {
            Form::Empty => {
                self.out.push('\n');
                Ok(())
            }
            Form::Primitive => {
                self.out.push_str(": ");
                self.primitive_items(items).map(|_| ())
            }
            Form::Tabular(columns) => {
                self.field_decl(columns.names.iter().copied());
                self.out.push('\n');
                let written = self.rows(items, &columns, body, level);
                self.give_columns(columns);
                written
            }
            Form::Expanded => {
                self.out.push('\n');
                for (idx, item) in items.iter().enumerate() {
                    self.item(idx, item, body, level + 1)?;
                }
                Ok(())
            }
        }
    }

    /// The elements of a primitive array and the line's end; `Ok(false)` at the first
    /// element that is not a scalar.
    fn primitive_items(&mut self, items: &'v [Value]) -> Result<bool> {
        self.scalars(items.iter(), ',')
    }

    /// Scalars separated by `delimiter`, and the line's end; `Ok(false)` at the first value
    /// that is not a scalar.
    fn scalars(
        &mut self,
        values: impl Iterator<Item = &'v Value>,
        delimiter: char,
    ) -> Result<bool> {
        for (j, value) in values.enumerate() {
            if j > 0 {
                self.out.push(delimiter);
            }
            if !is_scalar(value) {
                return Ok(false);
            }
            scalar(&mut self.out, value)?;
        }
        self.out.push('\n');
        Ok(true)
    }

    /// Writes an array's header up to its `]` (the form decides the spelling of a member's).
    fn header(&mut self, depth: usize, head: Head<'_>, form: &Form<'_>, len: usize) {
        head.write(&mut self.out, depth, matches!(form, Form::Primitive), len);
    }

    /// Writes a table (an array at nesting `level` whose first element is an object) in one
    /// pass, on the guess that every row has row 0's keys in row 0's order and that each
    /// column takes the schema row 0 suggests. `Ok(false)` when a row proves the guess
    /// wrong: the caller then truncates the output and decides with [`Walker::classify`],
    /// which reads every row first. When the guess holds, both decide the same.
    fn guessed_table(
        &mut self,
        depth: usize,
        head: Head<'_>,
        items: &'v [Value],
        body: usize,
        level: usize,
    ) -> Result<bool> {
        let Some(Value::Object(first)) = items.first() else {
            return Ok(false);
        };
        if first.is_empty() {
            return Ok(false);
        }
        // The rows are one level down, their containers two.
        self.enter(level + 1)?;
        let (mut guesses, mut names) = self.guesses.pop().unwrap_or_default();
        guesses.clear();
        names.clear();
        // Row 0's keys first, then each schema's.
        names.extend(first.keys().map(String::as_str));
        let mut broken = false;
        for value in first.values() {
            let guess = match value {
                Value::Object(object) => {
                    if self.opts.inline_schemas && object.len() >= 3 && all_scalar_members(object) {
                        Guess::Inline(Keys::push(&mut names, object))
                    } else {
                        Guess::Plain
                    }
                }
                Value::Array(rows) => match shared_candidate(rows) {
                    Some(_) if !self.opts.shared_schemas => Guess::Plain,
                    Some(Some(schema)) => Guess::Shared(Keys::push(&mut names, schema)),
                    Some(None) => {
                        // A table whose field union is not its row 0's keys.
                        broken = true;
                        break;
                    }
                    None => Guess::Plain,
                },
                _ => Guess::Plain,
            };
            guesses.push(guess);
        }
        let done = if broken {
            Ok(false)
        } else {
            let flat = first.values().all(is_scalar);
            self.guessed_rows(depth, head, items, &names, &guesses, flat, body, level)
        };
        if self.guesses.len() < 16 {
            self.guesses.push((guesses, names));
        }
        done
    }

    /// The body of [`Walker::guessed_table`].
    #[allow(clippy::too_many_arguments)]
    fn guessed_rows(
        &mut self,
        depth: usize,
        head: Head<'_>,
        items: &'v [Value],
        names: &[&'v str],
        guesses: &[Guess],
        flat: bool,
        body: usize,
        level: usize,
    ) -> Result<bool> {
        let columns = &names[..guesses.len()];
        self.header(depth, head, &Form::Empty, items.len());
        self.field_decl(columns.iter().copied());
        self.out.push('\n');
        let ncols = columns.len();
        for (r, item) in items.iter().enumerate() {
            let Value::Object(row) = item else {
                return Ok(false);
            };
            if row.len() != ncols {
                return Ok(false);
            }
            if flat {
                // Row 0's keys are the schema: checked as the cells are written.
                if !self.keyed_row(body, row, columns)? {
                    return Ok(false);
                }
                continue;
            }
            indent(&mut self.out, body);
            let nested = row.values().any(|value| !is_scalar(value));
            if nested {
                self.enter(level + 2)?;
                self.out.push('@');
                number::write_u64(&mut self.out, r as u64);
                self.out.push(' ');
            }
            for (c, ((key, value), (column, guess))) in
                row.iter().zip(columns.iter().zip(guesses)).enumerate()
            {
                if c > 0 {
                    self.out.push('|');
                }
                if r > 0 && !(super::encode::key_eq(key, column) && guess.admits(value)) {
                    return Ok(false);
                }
                if is_scalar(value) {
                    scalar(&mut self.out, value)?;
                } else {
                    self.out.push('^');
                    if let (0, Guess::Inline(keys)) = (r, guess) {
                        self.field_decl(keys.of(names).iter().copied());
                    }
                }
            }
            self.out.push('\n');
            if !nested {
                continue;
            }
            for ((key, value), guess) in row.iter().zip(guesses) {
                match (value, guess) {
                    (Value::Object(members), Guess::Inline(keys)) => {
                        // The positional body, in the schema's keys.
                        let written = self.keyed_row(body, members, keys.of(names))?;
                        if !written {
                            return Ok(false);
                        }
                    }
                    (Value::Object(members), _) => {
                        self.object_attachment(body, key, members, false, level + 2)?;
                    }
                    (Value::Array(rows), Guess::Shared(keys)) if r > 0 => {
                        // Headerless rows in the shared schema.
                        self.enter(level + 3)?;
                        self.attachment_head(body, key, rows.len());
                        for shared in rows {
                            let Value::Object(cells) = shared else {
                                return Ok(false);
                            };
                            if !self.keyed_row(body + 2, cells, keys.of(names))? {
                                return Ok(false);
                            }
                        }
                    }
                    (Value::Array(rows), _) => {
                        self.array(body, Head::Attachment(key), rows, body + 2, level + 2)?;
                    }
                    _ => {}
                }
            }
        }
        Ok(true)
    }

    /// A row of `cells` at `depth` in the columns of `schema` (their keys in its order, every
    /// value a scalar), and its line end; `Ok(false)` at the first cell that breaks it.
    fn keyed_row(
        &mut self,
        depth: usize,
        cells: &'v Map<String, Value>,
        schema: &[&str],
    ) -> Result<bool> {
        if cells.len() != schema.len() {
            return Ok(false);
        }
        indent(&mut self.out, depth);
        for (j, ((key, value), column)) in cells.iter().zip(schema).enumerate() {
            if j > 0 {
                self.out.push('|');
            }
            if !(is_scalar(value) && super::encode::key_eq(key, column)) {
                return Ok(false);
            }
            scalar(&mut self.out, value)?;
        }
        self.out.push('\n');
        Ok(true)
    }

    fn field_decl<'k>(&mut self, names: impl Iterator<Item = &'k str>) {
        self.out.push('{');
        for (j, name) in names.enumerate() {
            if j > 0 {
                self.out.push(',');
            }
            write_key(&mut self.out, name);
        }
        self.out.push('}');
    }

    /// Writes expanded item `idx` (at nesting `level`) at `depth`.
    fn item(&mut self, idx: usize, item: &'v Value, depth: usize, level: usize) -> Result<()> {
        match item {
            Value::Object(members) => {
                self.enter(level)?;
                indent(&mut self.out, depth);
                self.out.push('@');
                number::write_u64(&mut self.out, idx as u64);
                self.out.push_str(" {}\n");
                self.members(members, depth + 1, level)
            }
            Value::Array(items) => self.array(depth, Head::Item(idx), items, depth + 1, level),
            _ => {
                indent(&mut self.out, depth);
                self.out.push('@');
                number::write_u64(&mut self.out, idx as u64);
                self.out.push_str(" =");
                scalar(&mut self.out, item)?;
                self.out.push('\n');
                Ok(())
            }
        }
    }

    /// The value of column `c` in `row`.
    #[inline]
    fn cell(row: &'v Map<String, Value>, columns: &Columns<'_>, c: usize) -> Option<&'v Value> {
        if columns.aligned {
            row.values().nth(c)
        } else {
            row.get(columns.names[c])
        }
    }

    /// Fills `slots` with each column's value in `row` (`None` where it has none).
    fn fill(
        row: &'v Map<String, Value>,
        columns: &Columns<'_>,
        slots: &mut Vec<Option<&'v Value>>,
    ) {
        slots.clear();
        if columns.aligned {
            slots.extend(row.values().map(Some));
            return;
        }
        slots.resize(columns.names.len(), None);
        for (pos, (key, value)) in row.iter().enumerate() {
            if let Some(c) = columns.find(key, pos) {
                slots[c] = Some(value);
            }
        }
    }

    /// The rows of a table (the array at nesting `level`) at `depth`.
    fn rows(
        &mut self,
        items: &'v [Value],
        columns: &Columns<'v>,
        depth: usize,
        level: usize,
    ) -> Result<()> {
        // The rows are objects one level down.
        self.enter(level + 1)?;
        let flat = !columns.objects.iter().any(|&o| o) && !columns.arrays.iter().any(|&a| a);
        if flat && columns.aligned {
            // Rows of scalars with every column in order: straight out.
            for item in items {
                let Value::Object(row) = item else {
                    return Err(stop());
                };
                self.scalar_row(depth, row.values())?;
            }
            return Ok(());
        }
        let ncols = columns.names.len();
        let mut schemas: Vec<Schema<'v>> = Vec::with_capacity(ncols);
        for c in 0..ncols {
            let mut schema = Schema::None;
            if self.opts.inline_schemas && columns.objects[c] {
                if let Some(keys) = Self::inline_schema(items, columns, c) {
                    schema = Schema::Inline(keys);
                }
            }
            if self.opts.shared_schemas && columns.arrays[c] {
                if let Some(shared) = self.shared_schema(items, columns, c) {
                    schema = Schema::Shared(shared);
                }
            }
            schemas.push(schema);
        }
        let mut slots = self.take_slots();
        let mut written = Ok(());
        for (r, item) in items.iter().enumerate() {
            let Value::Object(row) = item else {
                written = Err(stop());
                break;
            };
            Self::fill(row, columns, &mut slots);
            written = self.row(r, &slots, columns, &schemas, depth, level + 1);
            if written.is_err() {
                break;
            }
        }
        self.give_slots(slots);
        for schema in schemas {
            if let Schema::Shared(shared) = schema {
                self.give_columns(shared);
            }
        }
        written
    }

    /// Writes row `r` (an object at nesting `level`) of a table at `depth`, and its
    /// attachments.
    fn row(
        &mut self,
        r: usize,
        slots: &[Option<&'v Value>],
        columns: &Columns<'_>,
        schemas: &[Schema<'v>],
        depth: usize,
        level: usize,
    ) -> Result<()> {
        let nested = slots.iter().any(|v| v.is_some_and(|v| !is_scalar(v)));
        indent(&mut self.out, depth);
        if nested {
            self.enter(level + 1)?;
            self.out.push('@');
            number::write_u64(&mut self.out, r as u64);
            self.out.push(' ');
        }
        for (c, &v) in slots.iter().enumerate() {
            if c > 0 {
                self.out.push('|');
            }
            match v {
                None => self.out.push('~'),
                Some(value) if is_scalar(value) => scalar(&mut self.out, value)?,
                Some(value) => {
                    self.out.push('^');
                    if let (0, Schema::Inline(keys), Value::Object(_)) = (r, &schemas[c], value) {
                        self.field_decl(keys.keys().map(String::as_str));
                    }
                }
            }
        }
        self.out.push('\n');
        if !nested {
            return Ok(());
        }
        for (c, &v) in slots.iter().enumerate() {
            let Some(value) = v else {
                continue;
            };
            let key = columns.names[c];
            match (value, &schemas[c]) {
                (Value::Object(members), schema) => {
                    let inline = matches!(schema, Schema::Inline(_));
                    self.object_attachment(depth, key, members, inline, level + 1)?;
                }
                (Value::Array(items), Schema::Shared(schema)) if r > 0 => {
                    self.shared_rows(depth, key, items, schema, level + 1)?;
                }
                (Value::Array(items), _) => {
                    self.array(depth, Head::Attachment(key), items, depth + 2, level + 1)?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// `.key [M]` with rows in the column's shared schema (spec §7.4.5.3).
    fn shared_rows(
        &mut self,
        depth: usize,
        key: &str,
        items: &'v [Value],
        schema: &Columns<'_>,
        level: usize,
    ) -> Result<()> {
        self.enter(level)?;
        if !items.is_empty() {
            // Its rows.
            self.enter(level + 1)?;
        }
        self.attachment_head(depth, key, items.len());
        for item in items {
            let Value::Object(row) = item else {
                return Err(stop());
            };
            if row.len() == schema.names.len()
                && row
                    .keys()
                    .zip(&schema.names)
                    .all(|(k, name)| super::encode::key_eq(k, name))
            {
                self.scalar_row(depth + 2, row.values())?;
            } else {
                indent(&mut self.out, depth + 2);
                for (c, name) in schema.names.iter().enumerate() {
                    if c > 0 {
                        self.out.push('|');
                    }
                    match row.get(*name) {
                        Some(value) => scalar(&mut self.out, value)?,
                        None => self.out.push('~'),
                    }
                }
                self.out.push('\n');
            }
        }
        Ok(())
    }

    /// A line of scalar cells at `depth`.
    fn scalar_row(&mut self, depth: usize, cells: impl Iterator<Item = &'v Value>) -> Result<()> {
        indent(&mut self.out, depth);
        if self.scalars(cells, '|')? {
            Ok(())
        } else {
            Err(stop())
        }
    }

    /// `.key [N]` at `depth`: a shared-schema attachment's line.
    fn attachment_head(&mut self, depth: usize, key: &str, len: usize) {
        self.header(depth, Head::Attachment(key), &Form::Empty, len);
        self.out.push('\n');
    }

    /// A row's object attachment at the row's `depth`: the positional body of an inline
    /// schema, or `.key {}` and the members (the object at nesting `level`) two levels deeper.
    fn object_attachment(
        &mut self,
        depth: usize,
        key: &str,
        members: &'v Map<String, Value>,
        inline: bool,
        level: usize,
    ) -> Result<()> {
        if inline {
            return self.scalar_row(depth, members.values());
        }
        indent(&mut self.out, depth);
        self.out.push('.');
        write_key(&mut self.out, key);
        self.out.push_str(" {}\n");
        self.members(members, depth + 2, level)
    }

    /// The inline object schema of column `c` (as the tape encoder decides it): row 0 holds
    /// an object there; every row where the column is present and not null holds an object
    /// of scalars with the same keys in the same order; at least three keys.
    fn inline_schema(
        items: &'v [Value],
        columns: &Columns<'_>,
        c: usize,
    ) -> Option<&'v Map<String, Value>> {
        let mut schema: Option<&'v Map<String, Value>> = None;
        for (r, item) in items.iter().enumerate() {
            let Value::Object(row) = item else {
                return None;
            };
            let value = match Self::cell(row, columns, c) {
                Some(value) if !value.is_null() => value,
                _ if r == 0 => return None,
                _ => continue,
            };
            let Value::Object(object) = value else {
                return None;
            };
            if !all_scalar_members(object) {
                return None;
            }
            match schema {
                None => schema = Some(object),
                Some(first) => {
                    if first.len() != object.len()
                        || !first
                            .keys()
                            .zip(object.keys())
                            .all(|(a, b)| super::encode::key_eq(a, b))
                    {
                        return None;
                    }
                }
            }
        }
        schema.filter(|first| first.len() >= 3)
    }

    /// The shared array schema of column `c` (as the tape encoder decides it): row 0 holds
    /// an array there; every row where the column is present and not null holds a
    /// non-empty table of scalar rows, all with the same field union.
    fn shared_schema(
        &mut self,
        items: &'v [Value],
        columns: &Columns<'_>,
        c: usize,
    ) -> Option<Columns<'v>> {
        let mut union: Option<Columns<'v>> = None;
        for (r, item) in items.iter().enumerate() {
            let Value::Object(row) = item else {
                break;
            };
            let value = match Self::cell(row, columns, c) {
                Some(value) if !value.is_null() => value,
                _ if r == 0 => return None,
                _ => continue,
            };
            let form = match value {
                Value::Array(inner) => self.classify(inner),
                _ => Form::Expanded,
            };
            let (Form::Tabular(found), Value::Array(inner)) = (form, value) else {
                if let Some(first) = union {
                    self.give_columns(first);
                }
                return None;
            };
            let scalar = inner.iter().all(|item| match item {
                Value::Object(members) => all_scalar_members(members),
                _ => false,
            });
            let same = union
                .as_ref()
                .is_none_or(|first| first.names == found.names);
            if !scalar || !same {
                self.give_columns(found);
                if let Some(first) = union {
                    self.give_columns(first);
                }
                return None;
            }
            match union {
                None => union = Some(found),
                Some(_) => self.give_columns(found),
            }
        }
        union
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use crate::EncoderOptions;

    /// The value encoder against the tape encoder, with every option.
    fn same_as_tape(value: &Value) -> String {
        for (inline, shared) in [(true, true), (false, true), (true, false), (false, false)] {
            let opts = EncoderOptions::new()
                .inline_schemas(inline)
                .shared_schemas(shared);
            let fast = opts.to_string(value).unwrap();
            let tape = opts.to_string_value(value).unwrap();
            assert_eq!(fast, tape, "options ({inline}, {shared}), value {value}");
        }
        EncoderOptions::new().to_string(value).unwrap()
    }

    #[test]
    fn guessed_tables_that_hold() {
        // (Keys in sorted order: without `preserve_order`, serde_json's maps sort them.)
        let text = same_as_tape(&json!({"rows": [
            {"id": 1, "obj": {"a": 1, "b": "x", "c": null}, "sub": [{"p": 1, "q": 2}]},
            {"id": 2, "obj": null, "sub": [{"p": 3, "q": 4}, {"p": 5, "q": 6}]},
            {"id": 3, "obj": {"a": 2, "b": "y", "c": true}, "sub": null},
        ]}));
        assert_eq!(
            text,
            "GCF profile=generic\n## rows [3]{id,obj,sub}\n\
             @0 1|^{a,b,c}|^\n1|x|-\n.sub [1]{p,q}\n    1|2\n\
             @1 2|-|^\n.sub [2]\n    3|4\n    5|6\n\
             @2 3|^|-\n2|y|true\n"
        );
    }

    #[test]
    fn guesses_that_a_later_row_breaks() {
        // Key orders other than the sorted one need serde_json's `preserve_order` (on in
        // workspace builds); without it these cases still compare the two encoders.
        let cases = [
            // Rows: a new key, a missing key, keys in another order, a scalar element.
            json!([{"a": 1, "b": 2}, {"a": 1, "b": 2, "c": 3}]),
            json!([{"a": 1, "b": 2}, {"a": 1}]),
            json!([{"a": 1, "b": 2}, {"b": 2, "a": 1}]),
            json!([{"a": 1}, 2]),
            json!([{"a": 1}, [2]]),
            json!([{}, {}]),
            json!([{"a": 1}, {}]),
            // Inline schema: other keys, a nested member, a scalar, an array, fewer keys.
            json!([{"o": {"x": 1, "y": 2, "z": 3}}, {"o": {"x": 1, "y": 2, "w": 3}}]),
            json!([{"o": {"x": 1, "y": 2, "z": 3}}, {"o": {"x": 1, "y": 2, "z": [3]}}]),
            json!([{"o": {"x": 1, "y": 2, "z": 3}}, {"o": 4}]),
            json!([{"o": {"x": 1, "y": 2, "z": 3}}, {"o": [4]}]),
            json!([{"o": {"x": 1, "y": 2}}, {"o": {"x": 1, "y": 2}}]),
            json!([{"o": null}, {"o": {"x": 1, "y": 2, "z": 3}}]),
            // Shared schema: rows in another order, a missing field, a nested cell, an empty
            // array, a scalar, an object; row 0 not aligned.
            json!([{"s": [{"p": 1, "q": 2}]}, {"s": [{"q": 2, "p": 1}]}]),
            json!([{"s": [{"p": 1, "q": 2}]}, {"s": [{"p": 1}]}]),
            json!([{"s": [{"p": 1, "q": 2}]}, {"s": [{"p": 1, "q": [2]}]}]),
            json!([{"s": [{"p": 1, "q": 2}]}, {"s": []}]),
            json!([{"s": [{"p": 1, "q": 2}]}, {"s": 3}]),
            json!([{"s": [{"p": 1, "q": 2}]}, {"s": {"p": 1}}]),
            json!([{"s": [{"p": 1}, {"p": 1, "q": 2}]}, {"s": [{"p": 1, "q": 2}]}]),
            json!([{"s": [{"p": 1}, {"q": 2}]}, {"s": [{"p": 1, "q": 2}]}]),
            json!([{"s": [{}, {}]}, {"s": [{}]}]),
            json!([{"s": [1, 2]}, {"s": [{"p": 1}]}]),
            json!([{"s": null}, {"s": [{"p": 1}]}]),
            // Plain columns holding containers later.
            json!([{"a": 1}, {"a": {"x": 1}}, {"a": [1, {"y": 2}]}]),
            // Arrays that start with scalars and turn out mixed.
            json!([1, "a", null, true, 2.5]),
            json!([1, {"a": 1}]),
            json!([1, [2]]),
            json!(["x", "y", []]),
            json!([[1], 2]),
        ];
        for value in &cases {
            same_as_tape(value);
            same_as_tape(&json!({"k": value}));
            same_as_tape(&json!({"k": {"t": [{"n": value}]}}));
        }
    }

    #[test]
    fn a_reference_to_a_value_is_read_in_place_too() {
        let value = json!({"rows": [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}]});
        let reference = &value;
        assert_eq!(
            crate::to_string(&reference).unwrap(),
            crate::to_string(&value).unwrap()
        );
    }

    #[test]
    fn too_deep_values_report_the_tape_error() {
        let mut value = json!(1);
        for i in 0..40 {
            value = if i % 3 == 0 {
                json!([value])
            } else if i % 3 == 1 {
                json!({"k": value})
            } else {
                json!([{"t": value}])
            };
        }
        for depth in [1, 2, 5, 16, 39, 64] {
            let opts = EncoderOptions::new().max_depth(depth);
            let fast = opts.to_string(&value).map_err(|e| e.code());
            let tape = opts.to_string_value(&value).map_err(|e| e.code());
            assert_eq!(fast, tape, "max_depth {depth}");
        }
    }
}
