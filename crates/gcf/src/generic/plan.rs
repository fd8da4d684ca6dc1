//! The planner: the one place that decides how a payload is laid out. Given a container
//! (through the [`Node`] view), it says which form §7.3 and the later versions select for it
//! (an inline, tabular or expanded array; member lines, a `## key` section or a keyed table
//! for an object) and, for a table, how each field is written: a column of cells, a constant
//! in the header, flattened path columns, positional inline bodies, a shared array schema, or
//! attachments only. The writer ([`super::encode`]) writes exactly what it decided.
//!
//! The rules are those of the version the options name: v3.1 (field union, inline object
//! schemas and shared array schemas, as its reference encoder applies them) and the current
//! spec (v3.5.3 flattening, keyed maps and the `>` rule, v3.6 constant columns, as gcf-python
//! and the `gcf` crate apply them). With a token counter, [`super::fewest`] searches the
//! same choices for the fewest tokens; everything here is what it chooses among.

use std::collections::HashMap;

use super::encode::{key_eq, Encoder};
use super::view::{Kind, Node, Scalar, ARRAY, NULL, OBJECT, SCALAR};
use crate::error::Result;

/// Above this many fields, table columns are found through a hash map.
const LINEAR_LOOKUP_MAX: usize = 12;

/// The form of an array (spec §7.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ArrayForm {
    Empty,
    /// `key[N]: a,b`.
    Inline,
    /// A table of rows (all elements objects, a non-empty field union).
    Table,
    /// `@i` items.
    Expanded,
}

/// How one field of a table is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// A column of cells: scalars, `-`, `~`, or `^` and a traditional attachment.
    Cells,
    /// A constant column: `name=value` in the header, nothing in the rows (v3.6 §7.4.7).
    Const,
    /// Path columns `"name>key"`, one per scalar leaf (v3.2 §7.4.6).
    Flat,
    /// Path columns `"name>key"` for the union of the keys of one-level objects that differ
    /// between rows, `~` for a key a row's object lacks (fewest tokens; every current decoder
    /// reads it, spec §7.4.6.2 rule 3).
    Sparse,
    /// A column of objects written as positional bodies, `^{keys}` on row 0 (§7.4.5.1).
    Inline,
    /// Not a column (the name holds `>`, v3.2 §7.4.6.1.4): an attachment in each row that
    /// has the field, `.name =scalar` for scalars.
    Attach,
}

/// One field of a table: its form, and what the form needs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FieldPlan<N> {
    pub(crate) form: Form,
    /// Its arrays after row 0 omit their field list (§7.4.5.3): `shared` in `Table::keys`.
    pub(crate) shared: Option<(u32, u32)>,
    /// `Const`: row 0's value. `Flat`: the object whose keys are the paths. `Inline`: row 0's
    /// object, whose keys are the schema.
    pub(crate) node: Option<N>,
    /// `Flat`, `Sparse`: the number of leaf columns.
    pub(crate) leaves: u32,
    /// `Sparse`: the keys, in `Table::keys`.
    pub(crate) union: (u32, u32),
}

/// A table's plan: its field union and how each field is written.
#[derive(Debug)]
pub(crate) struct Table<'v, N> {
    /// The field union, in first-seen order (§7.4.3).
    pub(crate) names: Vec<&'v str>,
    pub(crate) fields: Vec<FieldPlan<N>>,
    /// Field lists of shared array schemas.
    pub(crate) keys: Vec<&'v str>,
    /// Every row has exactly the fields, in their order.
    pub(crate) aligned: bool,
    /// Some row has an attachment (and so an `@i` prefix); none has when this is false and
    /// the plan is complete (or row 0's, for row 0).
    pub(crate) nests: bool,
    /// A keyed map's key column label (`key`, `_key`, ...), when the rows are its members.
    pub(crate) label: Option<&'static str>,
    /// Per field, the union of the keys of its objects, for sparse flattening (fewest
    /// tokens only).
    pub(crate) sparse: Vec<Vec<&'v str>>,
    /// How much of `keys` the scan filled (shared schemas); sparse unions are added after.
    pub(crate) shared_keys: usize,
    /// Finds fields by name.
    index: ColumnIndex<'v>,
    /// What the scan found, per field.
    pub(crate) facts: Vec<Facts<N>>,
    /// The scalars of a table of scalar rows, row after row (kept by
    /// [`Encoder::scalar_rows`] when asked, for the writer to write them without reading
    /// the rows again).
    pub(crate) cells: Vec<Scalar<'v>>,
}

impl<N> Default for Table<'_, N> {
    fn default() -> Self {
        Table {
            names: Vec::new(),
            fields: Vec::new(),
            keys: Vec::new(),
            aligned: true,
            nests: false,
            label: None,
            sparse: Vec::new(),
            shared_keys: 0,
            index: ColumnIndex::default(),
            facts: Vec::new(),
            cells: Vec::new(),
        }
    }
}

impl<'v, N: Node<'v>> Table<'v, N> {
    fn clear(&mut self) {
        self.names.clear();
        self.fields.clear();
        self.keys.clear();
        self.aligned = true;
        self.nests = false;
        self.label = None;
        self.sparse.clear();
        self.shared_keys = 0;
        self.index.clear();
        self.facts.clear();
        self.cells.clear();
    }

    /// Declares the fields of a streamed table: each a column of cells (nested values
    /// traditional attachments), rows matched by name.
    pub(crate) fn declare(&mut self, names: &[&'v str]) {
        self.clear();
        for name in names {
            self.add(name, false);
            self.fields.push(FieldPlan {
                form: Form::Cells,
                shared: None,
                node: None,
                leaves: 0,
                union: (0, 0),
            });
        }
        self.aligned = false;
    }

    /// The field of `key`, trying `hint` first (rows usually list keys in union order).
    #[inline]
    pub(crate) fn find(&self, key: &str, hint: usize) -> Option<usize> {
        self.index.find(&self.names, key, hint)
    }

    fn add(&mut self, key: &'v str, sparse: bool) -> usize {
        let c = self.names.len();
        self.names.push(key);
        self.facts.push(Facts::new());
        if sparse {
            self.sparse.push(Vec::new());
        }
        self.index.added(&self.names);
        c
    }

    /// Whether some field is written in the rows or the header (not only as attachments).
    pub(crate) fn has_columns(&self) -> bool {
        self.fields.iter().any(|f| f.form != Form::Attach)
    }
}

/// Finds the columns of a table by name: a linear search while there are few, a hash map
/// after.
#[derive(Debug, Default)]
pub(crate) struct ColumnIndex<'t>(Option<HashMap<&'t str, usize>>);

impl<'t> ColumnIndex<'t> {
    /// The column of `key` among `names`, trying `hint` first.
    #[inline]
    pub(crate) fn find(&self, names: &[&'t str], key: &str, hint: usize) -> Option<usize> {
        if names.get(hint).is_some_and(|name| key_eq(name, key)) {
            return Some(hint);
        }
        match &self.0 {
            Some(index) => index.get(key).copied(),
            None => names.iter().position(|n| key_eq(n, key)),
        }
    }

    /// Takes note of the name just pushed onto `names`.
    pub(crate) fn added(&mut self, names: &[&'t str]) {
        let (Some(&key), c) = (names.last(), names.len().wrapping_sub(1)) else {
            return;
        };
        if let Some(index) = &mut self.0 {
            index.insert(key, c);
        } else if names.len() > LINEAR_LOOKUP_MAX {
            self.0 = Some(names.iter().enumerate().map(|(i, n)| (*n, i)).collect());
        }
    }

    pub(crate) fn clear(&mut self) {
        self.0 = None;
    }
}

/// What the scan of a table found about one field.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Facts<N> {
    /// The rows that have the field (those the aligned fast path read are added at the end).
    pub(crate) present: u32,
    /// The kinds of its values: bits of [`Node::kind_bit`].
    pub(crate) kinds: u8,
    /// The value in row 0.
    row0: Option<N>,
    /// Every row so far has the same scalar as row 0.
    constant: bool,
    /// The first object (non-null) the field holds: the shape others must have.
    shape: Option<N>,
    /// Flattening and an inline schema are still possible.
    flat: bool,
    inline: bool,
    /// Every value of the shape is a scalar (so that an object of the shape's shape has its
    /// keys, which an inline schema needs).
    shape_scalar: bool,
    /// A shared array schema is still possible; its field union in `Table::keys`.
    shared: bool,
    union: (u32, u32),
    /// Sparse flattening is still possible (its union in `Table::sparse`).
    sparse: bool,
}

impl<N> Facts<N> {
    pub(crate) fn has(&self, kind: u8) -> bool {
        self.kinds & kind != 0
    }

    /// Takes note of a container a one-pass writer found to keep its field's form as it
    /// wrote it, a canonical plan's (no sparse unions): an object of a flattened field's
    /// shape with a leaf not null, an object with an inline schema's keys, in order, all
    /// scalars (of a field that can no longer be flattened), or an array in step with a
    /// shared schema (every row its keys, in order, with scalars). [`Encoder::note`] would change nothing else for it
    /// (the shape, schema and inline checks all hold), so it is not read again.
    #[inline]
    pub(crate) fn fitted(&mut self, kind: u8) {
        self.kinds |= kind;
        self.constant = false;
        if kind == OBJECT {
            self.sparse = false;
        }
    }

    /// Whether the field's objects may still be flattened, as far as the scan knows.
    pub(crate) fn flat_possible(&self) -> bool {
        self.flat
    }

    fn new() -> Self {
        Facts {
            present: 0,
            kinds: 0,
            row0: None,
            constant: false,
            shape: None,
            flat: true,
            inline: true,
            shape_scalar: false,
            shared: true,
            union: (0, 0),
            sparse: true,
        }
    }
}

/// The scalar a field must have to be constant, and whether two scalars are written alike.
#[inline]
pub(crate) fn same_scalar(a: Scalar<'_>, b: Scalar<'_>, current: bool) -> bool {
    match (a, b) {
        (Scalar::Str(x), Scalar::Str(y)) => key_eq(x, y),
        (Scalar::Null, Scalar::Null) => true,
        (Scalar::Bool(x), Scalar::Bool(y)) => x == y,
        (Scalar::U64(x), Scalar::U64(y)) => x == y,
        (Scalar::I64(x), Scalar::I64(y)) => x == y,
        (Scalar::U64(x), Scalar::I64(y)) | (Scalar::I64(y), Scalar::U64(x)) => {
            i64::try_from(x).is_ok_and(|x| x == y)
        }
        // Distinct doubles have distinct shortest digits; the zeros are both `0` in the
        // current spec (v3.1 writes `-0`).
        (Scalar::F64(x), Scalar::F64(y)) => {
            x.to_bits() == y.to_bits() || (current && x == 0.0 && y == 0.0)
        }
        (Scalar::Lexeme(x), Scalar::Lexeme(y)) if x == y => true,
        (Scalar::Str(_) | Scalar::Null | Scalar::Bool(_), _)
        | (_, Scalar::Str(_) | Scalar::Null | Scalar::Bool(_)) => false,
        // Numbers of different types (or floats): compared as written (`1.0` is written `1`).
        (a, b) => same_written(a, b, current),
    }
}

/// Whether two numbers are written alike (the rare arm of [`same_scalar`], out of line).
#[cold]
#[inline(never)]
fn same_written(a: Scalar<'_>, b: Scalar<'_>, current: bool) -> bool {
    let (mut x, mut y) = (String::new(), String::new());
    super::encode::write_scalar(&mut x, a, current).is_ok()
        && super::encode::write_scalar(&mut y, b, current).is_ok()
        && x == y
}

/// Whether a key holds `>` (keys are short: a loop, not a `memchr` call).
#[inline]
pub(crate) fn has_gt(key: &str) -> bool {
    key.bytes().any(|b| b == b'>')
}

/// Whether every member of an object is a scalar.
fn all_scalar<'v, N: Node<'v>>(object: N) -> bool {
    object.members().all(|(_, v)| v.is_scalar())
}

/// Whether an object can be the shape of flattened columns (§7.4.6.1): at least one member;
/// no key empty or holding `>`; no arrays; nested objects alike (within `budget` levels).
fn flat_shape<'v, N: Node<'v>>(object: N, budget: usize) -> bool {
    if object.len() == 0 || budget == 0 {
        return false;
    }
    object.members().all(|(k, v)| {
        !k.is_empty()
            && !has_gt(k)
            && match v.kind() {
                Kind::Scalar => true,
                Kind::Array => false,
                Kind::Object => flat_shape(v, budget - 1),
            }
    })
}

/// Whether `object` has exactly the keys of `shape`, in order, with objects where it has
/// objects (alike, recursively) and scalars where it has scalars.
fn same_shape<'v, N: Node<'v>>(shape: N, object: N) -> bool {
    shape.len() == object.len()
        && shape
            .members()
            .zip(object.members())
            .all(|((a, x), (b, y))| {
                key_eq(a, b)
                    && match x.kind() {
                        Kind::Object => y.is_object() && same_shape(x, y),
                        _ => y.is_scalar(),
                    }
            })
}

/// Whether `object` has the keys of `shape` in order, every value a scalar.
fn same_keys<'v, N: Node<'v>>(shape: N, object: N) -> bool {
    shape.len() == object.len()
        && shape
            .members()
            .zip(object.members())
            .all(|((a, _), (b, y))| key_eq(a, b) && y.is_scalar())
}

/// Whether every leaf of a flattenable object is null (it would decode as a null object).
fn all_null<'v, N: Node<'v>>(object: N) -> bool {
    object.members().all(|(_, v)| match v.kind() {
        Kind::Object => all_null(v),
        _ => v.is_null(),
    })
}

/// The number of scalar leaves of a flattenable object.
pub(crate) fn leaf_count<'v, N: Node<'v>>(object: N) -> u32 {
    object
        .members()
        .map(|(_, v)| if v.is_object() { leaf_count(v) } else { 1 })
        .sum()
}

/// The label of a keyed map's key column: `key`, with `_` prepended until no value field
/// has the name (spec §7.2a.2).
pub(crate) fn key_label(names: &[&str]) -> &'static str {
    const LABELS: [&str; 8] = [
        "key",
        "_key",
        "__key",
        "___key",
        "____key",
        "_____key",
        "______key",
        "_______key",
    ];
    for label in LABELS {
        if !names.contains(&label) {
            return label;
        }
    }
    // More underscores than anyone writes: leaked once per distinct length.
    let mut label = String::from("________key");
    while names.contains(&label.as_str()) {
        label.insert(0, '_');
    }
    Box::leak(label.into_boxed_str())
}

/// The counts of a scan in progress.
#[derive(Debug)]
pub(crate) struct ScanState {
    /// Rows read.
    rows: u32,
    /// Rows read in step with the union (their fields counted present at the end).
    aligned_rows: u32,
    /// Levels left for flattened objects.
    pub(crate) budget: usize,
}

impl ScanState {
    /// Counts a row read in step with the union by [`Encoder::observe`].
    #[inline]
    pub(crate) fn count_aligned(&mut self) {
        self.rows += 1;
        self.aligned_rows += 1;
    }
}

/// What the options allow a table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Allow {
    pub(crate) flatten: bool,
    pub(crate) inline: bool,
    pub(crate) shared: bool,
    pub(crate) constants: bool,
    /// Fields named with `>` are attachments (the current spec).
    pub(crate) gt_attach: bool,
    /// Objects whose keys differ between rows may be flattened (fewest tokens).
    pub(crate) sparse: bool,
    /// The fewest keys of an inline object schema: 3 canonically (§7.4.5.1), 1 for fewest
    /// tokens (every current decoder reads smaller schemas).
    pub(crate) inline_min: usize,
}

impl<'v, N: Node<'v>> Encoder<'v, '_, N> {
    /// The form of an array (spec §7.3): empty; all scalars; all objects with a non-empty
    /// field union; anything else.
    pub(crate) fn array_form(&self, items: N) -> ArrayForm {
        let mut elements = items.elements();
        let Some(first) = elements.next() else {
            return ArrayForm::Empty;
        };
        match first.kind() {
            Kind::Scalar => {
                if elements.all(|e| e.is_scalar()) {
                    ArrayForm::Inline
                } else {
                    ArrayForm::Expanded
                }
            }
            Kind::Array => ArrayForm::Expanded,
            Kind::Object => {
                let mut fields = first.len() > 0;
                for e in elements {
                    if !e.is_object() {
                        return ArrayForm::Expanded;
                    }
                    fields = fields || e.len() > 0;
                }
                if fields {
                    ArrayForm::Table
                } else {
                    // Only empty objects: a zero-column row has no line form.
                    ArrayForm::Expanded
                }
            }
        }
    }

    /// Whether an object is written as a keyed table (spec §7.2a.1): the current spec with
    /// keyed maps on; at least two members, all objects; a non-empty field union with a
    /// field that can be a column (no `>`).
    pub(crate) fn keyed_candidate(&self, object: N) -> bool {
        if object.len() < 2 || !object.members().all(|(_, v)| v.is_object()) {
            return false;
        }
        object
            .members()
            .any(|(_, v)| v.members().any(|(k, _)| !has_gt(k)))
    }

    /// What the options allow the tables of this encoding.
    pub(crate) fn allow(&self, top: bool, keyed: bool) -> Allow {
        let opts = self.opts;
        let current = self.current;
        Allow {
            flatten: current && opts.flatten,
            inline: opts.inline_schemas,
            shared: opts.shared_schemas,
            // Constant columns where the canonical encoders put them (root and member
            // tables); fewest-tokens encodings, in any table but a keyed one (every current
            // decoder reads them there).
            constants: current
                && opts.constant_columns
                && !keyed
                && (top || self.fewest.is_some())
                && !self.shared_first,
            gt_attach: current,
            sparse: current && opts.flatten && self.fewest.is_some(),
            inline_min: if self.fewest.is_some() { 1 } else { 3 },
        }
    }

    /// A cleared table from the pool (boxed: a table is moved as a pointer).
    pub(crate) fn take_table(&mut self) -> Box<Table<'v, N>> {
        let mut table = self.spare_tables.pop().unwrap_or_default();
        table.clear();
        table
    }

    /// Returns a table to the pool.
    pub(crate) fn give_table(&mut self, table: Box<Table<'v, N>>) {
        if self.spare_tables.len() < 16 {
            self.spare_tables.push(table);
        }
    }

    /// Plans a table: `rows` (objects at nesting `level`, `n` of them) of an array, or the
    /// member objects of a keyed map; `top` for a root or member array (where constant
    /// columns are canonical); rows written at `depth`. With `keep`, a table of scalar rows
    /// ([`Encoder::scalar_rows`]) keeps its rows' scalars in `table.cells`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn plan_table<I>(
        &mut self,
        id: usize,
        rows: I,
        n: usize,
        keyed: bool,
        top: bool,
        level: usize,
        depth: usize,
        keep: bool,
    ) -> Result<Box<Table<'v, N>>>
    where
        I: Iterator<Item = N> + Clone,
    {
        let allow = self.allow(top, keyed);
        let mut table = self.take_table();
        if self.fewest.is_none() && !keyed {
            if self.scalar_rows(&mut table, rows.clone(), n, allow, keep) {
                return Ok(table);
            }
            table.clear();
        }
        let again = rows.clone();
        self.scan(&mut table, rows, allow, level);
        if keyed {
            table.label = Some(key_label(&table.names));
        }
        if self.fewest.is_some() {
            if let Err(e) = self.fewest_table(&mut table, id, &again, n, top, level, depth) {
                self.give_table(table);
                return Err(e);
            }
        } else {
            self.canonical(&mut table, n, allow);
        }
        Ok(table)
    }

    /// The canonical plan of a table whose rows are objects of scalars, each with row 0's
    /// keys in row 0's order (most small tables): columns of cells, the constant ones in the
    /// header where `allow` has constants, at least one column in the rows. This is what
    /// [`Encoder::scan`] and [`Encoder::canonical`] decide for such a table, found in one pass
    /// over the rows without per-field facts; with `keep`, the rows' scalars are kept in
    /// `table.cells`. `false` (the table left partly filled) for any other table, or a key
    /// with `>` where it is an attachment. (Out of line: inlined into `plan_table` and so
    /// into the writer's `array`, it cost the deep configuration 1 % more instructions.)
    #[inline(never)]
    fn scalar_rows<I>(
        &self,
        table: &mut Table<'v, N>,
        mut rows: I,
        n: usize,
        allow: Allow,
        keep: bool,
    ) -> bool
    where
        I: Iterator<Item = N>,
    {
        let Some(first) = rows.next() else {
            return false;
        };
        let k = first.len();
        if k == 0 || k > LINEAR_LOOKUP_MAX || !first.is_object() {
            return false;
        }
        // Row 0's scalars (kept in any case: the other rows are compared with them).
        table.cells.clear();
        table.fields.clear();
        for (key, value) in first.members() {
            let Some(scalar) = value.scalar() else {
                return false;
            };
            if (allow.gt_attach && has_gt(key)) || table.names.iter().any(|name| key_eq(name, key))
            {
                return false;
            }
            // (No per-field facts; at most `LINEAR_LOOKUP_MAX` names, found by a linear
            // search, so the index needs no note of them.)
            table.names.push(key);
            table.cells.push(scalar);
            table.fields.push(FieldPlan {
                form: Form::Cells,
                shared: None,
                node: Some(value),
                leaves: 0,
                union: (0, 0),
            });
        }
        // The columns still constant, a bit each.
        let mut constant: u32 = if allow.constants && n >= 2 {
            (1 << k) - 1
        } else {
            0
        };
        for row in rows {
            if !row.is_object() || row.len() != k {
                return false;
            }
            for (c, (key, value)) in row.members().enumerate() {
                if !key_eq(key, table.names[c]) {
                    return false;
                }
                let Some(scalar) = value.scalar() else {
                    return false;
                };
                if constant & (1 << c) != 0 && !same_scalar(table.cells[c], scalar, self.current) {
                    constant &= !(1 << c);
                }
                if keep {
                    table.cells.push(scalar);
                }
            }
        }
        if constant == (1 << k) - 1 {
            // At least one column stays in the rows: the last.
            constant &= !(1 << (k - 1));
        }
        for (c, field) in table.fields.iter_mut().enumerate() {
            if constant & (1 << c) != 0 {
                field.form = Form::Const;
            } else {
                field.node = None;
            }
        }
        table.aligned = true;
        table.nests = false;
        true
    }

    /// Reads every row of a table (objects at nesting `level`): the field union, whether
    /// rows are aligned with it, and per field what flattening, inline and shared schemas
    /// and constant columns need to know.
    pub(crate) fn scan<I>(&self, table: &mut Table<'v, N>, rows: I, allow: Allow, level: usize)
    where
        I: Iterator<Item = N>,
    {
        let mut state = self.scan_state(level);
        for (r, row) in rows.enumerate() {
            self.scan_row(table, &mut state, r, row, allow, None);
        }
        self.finish_scan(table, &state);
    }

    /// A scan's counts, for rows at nesting `level`.
    pub(crate) fn scan_state(&self, level: usize) -> ScanState {
        ScanState {
            rows: 0,
            aligned_rows: 0,
            // Flattened objects (a level below the rows) must fit the depth limit.
            budget: self.opts.max_depth.saturating_sub(level),
        }
    }

    /// Reads row `r` of a table (see [`Encoder::scan`]); `true` when its members are the
    /// union's fields in order (for a row after row 0), and then `values` (if given) has
    /// the row's values in field order.
    #[inline(always)]
    pub(crate) fn scan_row(
        &self,
        table: &mut Table<'v, N>,
        state: &mut ScanState,
        r: usize,
        row: N,
        allow: Allow,
        mut values: Option<&mut Vec<N>>,
    ) -> bool {
        let budget = state.budget;
        state.rows += 1;
        let mut done = 0;
        if r > 0 && table.aligned {
            // Rows usually list the union's keys in its order: matched in step.
            let Table {
                names,
                facts,
                keys,
                sparse,
                ..
            } = &mut *table;
            for (c, ((name, facts), (key, value))) in names
                .iter()
                .zip(facts.iter_mut())
                .zip(row.members())
                .enumerate()
            {
                if !key_eq(name, key) {
                    break;
                }
                done += 1;
                if let Some(values) = values.as_deref_mut() {
                    values.push(value);
                }
                let kind = value.kind_bit();
                facts.kinds |= kind;
                if kind & (OBJECT | ARRAY) != 0 {
                    self.note(facts, keys, sparse.get_mut(c), value, allow, budget);
                } else if facts.constant {
                    facts.constant = self.same_as_row0(facts.row0, value);
                }
            }
            if done == row.len() && done == table.names.len() {
                state.aligned_rows += 1;
                return true;
            }
            // Count the fields read in step as present.
            for facts in &mut table.facts[..done] {
                facts.present += 1;
            }
        }
        for (pos, (key, value)) in row.members().enumerate().skip(done) {
            let c = match table.find(key, pos) {
                Some(c) => c,
                None => table.add(key, allow.sparse),
            };
            if c != pos {
                table.aligned = false;
            }
            let Table {
                facts,
                keys,
                sparse,
                ..
            } = &mut *table;
            let facts = &mut facts[c];
            facts.present += 1;
            if r == 0 {
                facts.row0 = Some(value);
            }
            let kind = value.kind_bit();
            facts.kinds |= kind;
            if kind & (OBJECT | ARRAY) != 0 {
                self.note(facts, keys, sparse.get_mut(c), value, allow, budget);
            } else if r == 0 {
                facts.constant = allow.constants;
            } else if facts.constant {
                facts.constant = self.same_as_row0(facts.row0, value);
            }
        }
        false
    }

    /// Reads `value` (whose scalar is `scalar`), field `c`'s in a row after row 0 of an
    /// aligned table, its name already matched; the caller counts the row, once every
    /// member is read, with [`ScanState::count_aligned`]. Reading a value twice finds what
    /// reading it once did.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn observe(
        &self,
        facts: &mut Facts<N>,
        keys: &mut Vec<&'v str>,
        sparse: &mut [Vec<&'v str>],
        c: usize,
        value: N,
        scalar: Option<Scalar<'_>>,
        allow: Allow,
        budget: usize,
    ) {
        match scalar {
            Some(scalar) => {
                facts.kinds |= if matches!(scalar, Scalar::Null) {
                    NULL
                } else {
                    SCALAR
                };
                if facts.constant {
                    facts.constant = facts
                        .row0
                        .and_then(Node::scalar)
                        .is_some_and(|row0| same_scalar(row0, scalar, self.current));
                }
            }
            None => {
                facts.kinds |= value.kind_bit();
                self.note(facts, keys, sparse.get_mut(c), value, allow, budget);
            }
        }
    }

    /// Completes a scan: a field some row lacks is not constant, and the rows are not
    /// aligned.
    pub(crate) fn finish_scan(&self, table: &mut Table<'v, N>, state: &ScanState) {
        table.shared_keys = table.keys.len();
        for facts in &mut table.facts {
            facts.present += state.aligned_rows;
            if facts.present != state.rows {
                facts.constant = false;
                table.aligned = false;
            }
        }
    }

    /// Whether what the scan found so far still allows each field the form `table.fields`
    /// gives it (a plan made from fewer rows).
    pub(crate) fn plan_holds(&self, table: &Table<'v, N>) -> bool {
        table.fields.iter().zip(&table.facts).all(|(field, facts)| {
            let containers = !facts.has(SCALAR);
            let plain = match field.form {
                Form::Flat => facts.flat && containers && !facts.has(ARRAY),
                Form::Inline => facts.inline && containers && !facts.has(ARRAY),
                Form::Sparse => false,
                Form::Cells | Form::Attach | Form::Const => true,
            };
            plain && (field.shared.is_none() || (facts.shared && containers && !facts.has(OBJECT)))
        })
    }

    /// Whether a scalar is written as row 0's value is.
    #[inline(never)]
    fn same_as_row0(&self, row0: Option<N>, value: N) -> bool {
        match (row0.and_then(Node::scalar), value.scalar()) {
            (Some(a), Some(b)) => same_scalar(a, b, self.current),
            _ => false,
        }
    }

    /// Takes note of a container, a field's value in some row (`keys` holds the field
    /// unions of shared array schemas).
    #[inline(never)]
    fn note(
        &self,
        facts: &mut Facts<N>,
        keys: &mut Vec<&'v str>,
        sparse: Option<&mut Vec<&'v str>>,
        value: N,
        allow: Allow,
        budget: usize,
    ) {
        facts.constant = false;
        if value.is_object() {
            if facts.sparse {
                facts.sparse = sparse.is_some_and(|union| sparse_union(union, value));
            }
            if !(facts.flat || facts.inline) {
                return;
            }
            match facts.shape {
                None => {
                    facts.shape = Some(value);
                    facts.shape_scalar = all_scalar(value);
                    facts.inline = facts.inline && facts.shape_scalar;
                    facts.flat = facts.flat && allow.flatten && flat_shape(value, budget);
                }
                Some(shape) => {
                    let flat = facts.flat && same_shape(shape, value);
                    // An object of a scalar shape's shape has its keys.
                    if facts.inline && !(flat && facts.shape_scalar) {
                        facts.inline = same_keys(shape, value);
                    }
                    facts.flat = flat;
                }
            }
            if facts.flat && all_null(value) {
                // All leaves null would decode as a null object.
                facts.flat = false;
            }
        } else {
            if facts.shared && allow.shared {
                match shared_union(keys, value, facts.union, self.current) {
                    Some(found) => facts.union = found,
                    None => facts.shared = false,
                }
            }
        }
    }

    /// The canonical plan of a scanned table: the version's rules, in the oracles' order
    /// (flattening first, then the `>` rule, inline schemas, shared schemas, constants).
    pub(crate) fn canonical(&self, table: &mut Table<'v, N>, nrows: usize, allow: Allow) {
        table.fields.clear();
        for f in 0..table.names.len() {
            let options = FieldOptions::of(table.names[f], &table.facts[f], nrows, allow);
            let form = if options.flat {
                Form::Flat
            } else if options.attach {
                Form::Attach
            } else if options.inline {
                Form::Inline
            } else if options.constant {
                Form::Const
            } else {
                Form::Cells
            };
            let plan = plan_of(&table.facts[f], form, options.shared);
            table.fields.push(plan);
        }
        // At least one column stays in the rows.
        if table
            .fields
            .iter()
            .all(|f| matches!(f.form, Form::Const | Form::Attach))
        {
            if let Some(last) = table
                .fields
                .iter_mut()
                .rev()
                .find(|f| f.form == Form::Const)
            {
                last.form = Form::Cells;
                last.node = None;
            }
        }
        self.finish_plan(table);
    }

    /// Completes a plan whose forms are chosen: the `@i` flag.
    pub(crate) fn finish_plan(&self, table: &mut Table<'v, N>) {
        table.nests = table
            .fields
            .iter()
            .zip(&table.facts)
            .any(|(f, facts)| match f.form {
                Form::Attach => facts.present > 0,
                Form::Cells | Form::Inline => facts.has(OBJECT | ARRAY),
                Form::Const | Form::Flat | Form::Sparse => false,
            });
    }

    /// What each field of a scanned table may be, as the fewest-tokens search needs it.
    pub(crate) fn field_options(
        &self,
        table: &Table<'v, N>,
        nrows: usize,
        allow: Allow,
    ) -> Vec<FieldOptions> {
        table
            .names
            .iter()
            .zip(&table.facts)
            .map(|(name, facts)| FieldOptions::of(name, facts, nrows, allow))
            .collect()
    }

    /// The field plan of field `f` in a chosen form.
    pub(crate) fn field_plan(
        &self,
        table: &mut Table<'v, N>,
        f: usize,
        form: Form,
        shared: bool,
    ) -> FieldPlan<N> {
        let mut plan = plan_of(&table.facts[f], form, shared);
        if form == Form::Sparse {
            let union = &table.sparse[f];
            let start = table.keys.len() as u32;
            table.keys.extend_from_slice(union);
            plan.union = (start, table.keys.len() as u32);
            plan.leaves = union.len() as u32;
        }
        plan
    }
}

/// The plan of a field in `form`, from what the scan found.
fn plan_of<'v, N: Node<'v>>(facts: &Facts<N>, form: Form, shared: bool) -> FieldPlan<N> {
    FieldPlan {
        form,
        shared: (shared && matches!(form, Form::Cells | Form::Attach)).then_some(facts.union),
        node: match form {
            Form::Const | Form::Inline => facts.row0,
            Form::Flat => facts.shape,
            Form::Cells | Form::Attach | Form::Sparse => None,
        },
        leaves: match (form, facts.shape) {
            (Form::Flat, Some(shape)) => leaf_count(shape),
            _ => 0,
        },
        union: (0, 0),
    }
}

/// Adds the keys of `object` to the union of a field's objects, if it can be flattened
/// sparsely: at least one member, every value a scalar, keys that are not empty and hold no
/// `>`, in an order the union keeps (each row's keys a subsequence of the union, so that the
/// decoded objects keep their order).
fn sparse_union<'v, N: Node<'v>>(union: &mut Vec<&'v str>, object: N) -> bool {
    if object.len() == 0 {
        return false;
    }
    let mut last: Option<usize> = None;
    for (pos, (key, value)) in object.members().enumerate() {
        if !value.is_scalar() || key.is_empty() || has_gt(key) {
            return false;
        }
        let at = match union.get(pos) {
            Some(name) if key_eq(name, key) => pos,
            _ => match union.iter().position(|name| key_eq(name, key)) {
                Some(at) => at,
                None => {
                    union.push(key);
                    union.len() - 1
                }
            },
        };
        if last.is_some_and(|last| at <= last) {
            return false;
        }
        last = Some(at);
    }
    true
}

/// The union of an array's field names, if it is a non-empty table of scalar rows whose
/// union is `union` (a range of `keys`; empty the first time, which sets it).
fn shared_union<'v, N: Node<'v>>(
    keys: &mut Vec<&'v str>,
    array: N,
    union: (u32, u32),
    current: bool,
) -> Option<(u32, u32)> {
    if array.len() == 0 {
        return None;
    }
    let first = union.0 == union.1;
    let start = if first { keys.len() } else { union.0 as usize };
    let mut seen = 0usize;
    if !first {
        // Most arrays: every row has the union's keys in its order, all scalars.
        let names = &keys[start..union.1 as usize];
        let aligned = array.elements().all(|row| {
            row.is_object()
                && row.len() == names.len()
                && row
                    .members()
                    .zip(names)
                    .all(|((key, value), name)| key_eq(key, name) && value.is_scalar())
        });
        if aligned {
            return Some(union);
        }
    }
    for row in array.elements() {
        if !row.is_object() {
            if first {
                keys.truncate(start);
            }
            return None;
        }
        for (pos, (key, value)) in row.members().enumerate() {
            // A `>`-named field is no column in the current spec, so no schema row has a cell
            // for it (gcf-python and the `gcf` crate write one anyway, which no decoder reads).
            if !value.is_scalar() || (current && has_gt(key)) {
                if first {
                    keys.truncate(start);
                }
                return None;
            }
            let names = if first {
                &keys[start..]
            } else {
                &keys[start..union.1 as usize]
            };
            let at = if names.get(pos).is_some_and(|n| key_eq(n, key)) {
                Some(pos)
            } else {
                names.iter().position(|n| key_eq(n, key))
            };
            match at {
                Some(i) if i < seen => {}
                Some(i) if i == seen => seen += 1,
                None if first => {
                    keys.push(key);
                    seen += 1;
                }
                // A field the union does not have, or first seen out of the union's order.
                _ => {
                    if first {
                        keys.truncate(start);
                    }
                    return None;
                }
            }
        }
    }
    if first {
        if seen == 0 {
            keys.truncate(start);
            return None;
        }
        return Some((start as u32, keys.len() as u32));
    }
    (seen == (union.1 - union.0) as usize).then_some(union)
}

/// What one field of a table may be.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct FieldOptions {
    pub(crate) flat: bool,
    pub(crate) sparse: bool,
    pub(crate) attach: bool,
    pub(crate) inline: bool,
    pub(crate) shared: bool,
    pub(crate) constant: bool,
}

impl FieldOptions {
    fn of<'v, N: Node<'v>>(name: &str, facts: &Facts<N>, nrows: usize, allow: Allow) -> Self {
        let containers_only = !facts.has(SCALAR);
        let flat = allow.flatten
            && facts.flat
            && facts.has(OBJECT)
            && containers_only
            && !facts.has(ARRAY)
            && !name.is_empty()
            && !has_gt(name);
        let attach = allow.gt_attach && has_gt(name);
        // An inline schema is row 0's object (the first one, so the shape).
        let inline = allow.inline
            && facts.inline
            && containers_only
            && !facts.has(ARRAY)
            && facts.row0.is_some_and(Node::is_object)
            && facts
                .shape
                .is_some_and(|shape| shape.len() >= allow.inline_min);
        let shared = allow.shared
            && facts.shared
            && facts.has(ARRAY)
            && containers_only
            && !facts.has(OBJECT)
            && facts.union.1 > facts.union.0
            && facts.row0.is_some_and(Node::is_array);
        let constant = allow.constants
            && nrows >= 2
            && facts.constant
            && facts.present as usize == nrows
            && !attach;
        let sparse = allow.sparse
            && !flat
            && facts.sparse
            && facts.has(OBJECT)
            && containers_only
            && !facts.has(ARRAY)
            && !name.is_empty()
            && !has_gt(name);
        FieldOptions {
            flat,
            sparse,
            attach,
            inline,
            shared,
            constant,
        }
    }
}
