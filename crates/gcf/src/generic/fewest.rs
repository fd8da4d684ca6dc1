//! Fewest tokens: the planner's choices made by counting.
//!
//! Where the current grammar offers more than one encoding of a container, each candidate is
//! written into a scratch buffer and its tokens counted; the fewest win, ties going to the
//! canonical choice. The choices, per container:
//!
//! - an array of objects: a table, or expanded `@i {}` items (sparse rows can cost less
//!   as member lines than as a row of `~` cells);
//! - an object of objects: a keyed table, or `## key` sections;
//! - each field of a table: flattened path columns, a positional inline schema, or cells
//!   with traditional attachments; a shared array schema or not; a constant in the header or
//!   a column of cells (only where the canonical encoder puts constants: root and member
//!   tables);
//! - a sorted root table: value-grouped by one of its columns (spec v3.6 §7.4.8), when that
//!   is lossless (the records of each value adjacent, a unique key column, scalars only).
//!
//! A table's fields are decided one after the other, each keeping the best form found so
//! far for the others. Tokens are counted per line and added up (exact for cl100k_base and
//! o200k_base, whose pre-tokenizers never join two lines), with a cache of the lines already
//! counted; every container's decision is kept (per value node and depth), so a candidate of
//! an outer container writes its inner ones as already decided instead of searching again.
//! A last comparison with the canonical encoding of the whole payload makes sure the result
//! never has more tokens than it.

use std::collections::HashMap;

use super::encode::{Encoder, Head};
use super::plan::{Form, Table};
use super::view::Node;
use crate::error::Result;
use crate::options::TokenCounter;

/// Lines cached at most (then the cache starts over).
const MAX_CACHED_LINES: usize = 1 << 20;

/// The state of a fewest-tokens encoding.
pub(crate) struct Search<'o> {
    counter: &'o dyn TokenCounter,
    /// Tokens per line (with its line feed).
    lines: HashMap<String, u32>,
    /// Decisions, by (node, depth): an array is a table (or expanded items).
    tabular: HashMap<(usize, usize), bool>,
    /// An object is a keyed table (or sections).
    keyed: HashMap<(usize, usize), bool>,
    /// A table's field forms.
    tables: HashMap<(usize, usize), Vec<(Form, bool)>>,
    /// An array's value grouping: its key and group columns.
    grouping: HashMap<(usize, usize), Option<(String, String)>>,
    /// Scratch buffers for candidates.
    scratch: Vec<super::out::Out>,
}

impl<'o> Search<'o> {
    pub(crate) fn new(counter: &'o dyn TokenCounter) -> Self {
        Search {
            counter,
            lines: HashMap::new(),
            tabular: HashMap::new(),
            keyed: HashMap::new(),
            tables: HashMap::new(),
            grouping: HashMap::new(),
            scratch: Vec::new(),
        }
    }

    /// The tokens of `text`, line by line.
    pub(crate) fn count(&mut self, text: &str) -> usize {
        if self.lines.len() > MAX_CACHED_LINES {
            self.lines.clear();
        }
        let mut total = 0;
        for line in text.split_inclusive('\n') {
            total += match self.lines.get(line) {
                Some(&n) => n as usize,
                None => {
                    let n = self.counter.count(line);
                    self.lines.insert(line.to_owned(), n as u32);
                    n
                }
            };
        }
        total
    }
}

impl<'v, 'o, N: Node<'v>> Encoder<'v, 'o, N> {
    fn search(&mut self) -> &mut Search<'o> {
        self.fewest
            .as_deref_mut()
            .expect("the fewest-tokens search is on")
    }

    /// The tokens of what `write` writes (into a scratch buffer, the output left as it was).
    fn cost(&mut self, write: impl FnOnce(&mut Self) -> Result<()>) -> Result<usize> {
        let scratch = self.search().scratch.pop().unwrap_or_default();
        let saved = std::mem::replace(&mut self.out, scratch);
        let written = write(self);
        let mut scratch = std::mem::replace(&mut self.out, saved);
        let tokens = match written {
            Ok(()) => {
                let search = self.search();
                let tokens = search.count(scratch.as_str());
                Ok(tokens)
            }
            Err(e) => Err(e),
        };
        scratch.clear();
        self.search().scratch.push(scratch);
        tokens
    }

    /// Whether an array of objects (at nesting `level`, under `head` at `depth`) is written as
    /// a table rather than expanded items.
    pub(crate) fn fewest_tabular(
        &mut self,
        head: Head<'_>,
        items: N,
        depth: usize,
        level: usize,
    ) -> Result<bool> {
        let key = (items.id(), depth);
        if let Some(&tabular) = self.search().tabular.get(&key) {
            return Ok(tabular);
        }
        self.search().tabular.insert(key, true);
        let table = self.cost(|e| e.array(head, items, depth, level))?;
        self.search().tabular.insert(key, false);
        let expanded = self.cost(|e| e.array(head, items, depth, level))?;
        let tabular = table <= expanded;
        self.search().tabular.insert(key, tabular);
        Ok(tabular)
    }

    /// The key and group columns to value-group an array of records by (at nesting
    /// `level`, under `head` at `depth`), if grouping has the fewest tokens.
    pub(crate) fn fewest_grouping(
        &mut self,
        head: Head<'_>,
        items: N,
        depth: usize,
        level: usize,
    ) -> Result<Option<(String, String)>> {
        let key = (items.id(), depth);
        if let Some(found) = self.search().grouping.get(&key) {
            return Ok(found.clone());
        }
        // While deciding, the array is written as a table.
        self.search().grouping.insert(key, None);
        let Some((id, groups)) = self.group_candidates(items) else {
            return Ok(None);
        };
        let mut best = self.cost(|e| e.array(head, items, depth, level))?;
        let mut choice = None;
        for group in groups {
            let tokens = self.cost(|e| e.write_grouped(head, items, id, group, depth))?;
            if tokens < best {
                best = tokens;
                choice = Some((id.to_owned(), group.to_owned()));
            }
        }
        self.search().grouping.insert(key, choice.clone());
        Ok(choice)
    }

    /// Whether an object of objects (at nesting `level`, under `head` at `depth`) is written
    /// as a keyed table rather than sections.
    pub(crate) fn fewest_keyed(
        &mut self,
        head: Head<'_>,
        object: N,
        depth: usize,
        level: usize,
    ) -> Result<bool> {
        let key = (object.id(), depth);
        if let Some(&keyed) = self.search().keyed.get(&key) {
            return Ok(keyed);
        }
        self.search().keyed.insert(key, true);
        let table = self.cost(|e| e.object(head, object, depth, level))?;
        self.search().keyed.insert(key, false);
        let sections = self.cost(|e| e.object(head, object, depth, level))?;
        let keyed = table <= sections;
        self.search().keyed.insert(key, keyed);
        Ok(keyed)
    }

    /// Chooses the forms of a scanned table's fields (the table of container `id`, `rows`
    /// at nesting `level` written at `depth`) for the fewest tokens, starting from the
    /// canonical plan.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn fewest_table<I>(
        &mut self,
        table: &mut Table<'v, N>,
        id: usize,
        rows: &I,
        n: usize,
        top: bool,
        level: usize,
        depth: usize,
    ) -> Result<()>
    where
        I: Iterator<Item = N> + Clone,
    {
        let keyed = table.label.is_some();
        let allow = self.allow(top, keyed);
        let key = (id, depth);
        if let Some(choices) = self.search().tables.get(&key).cloned() {
            self.apply(table, &choices);
            return Ok(());
        }
        self.canonical(table, n, allow);
        let mut choices: Vec<(Form, bool)> = table
            .fields
            .iter()
            .map(|f| (f.form, f.shared.is_some()))
            .collect();
        let options = self.field_options(table, n, allow);
        let keys: Vec<Option<&'v str>> = if keyed {
            // The keys of the rows are needed to write them; a keyed table's rows come from
            // its members, whose keys the caller's iterator does not carry: the cost of the
            // key cells is the same for every candidate, so any key stands in.
            vec![Some(""); n]
        } else {
            vec![None; n]
        };
        let mut best = self.table_cost(table, &choices, rows.clone(), &keys, level, depth)?;
        for (f, option) in options.iter().enumerate() {
            let mut candidates: Vec<(Form, bool)> = Vec::new();
            let shared = [false, true];
            let forms: &[Form] = match choices[f].0 {
                Form::Attach => &[Form::Attach],
                _ => &[
                    Form::Flat,
                    Form::Sparse,
                    Form::Inline,
                    Form::Const,
                    Form::Cells,
                ],
            };
            for &form in forms {
                let possible = match form {
                    Form::Flat => option.flat,
                    Form::Sparse => option.sparse && !all_null_rows(table, f, rows.clone()),
                    Form::Inline => option.inline,
                    Form::Const => option.constant,
                    Form::Cells | Form::Attach => true,
                };
                if !possible {
                    continue;
                }
                for &s in &shared {
                    if s && !(option.shared && matches!(form, Form::Cells | Form::Attach)) {
                        continue;
                    }
                    if (form, s) != choices[f] {
                        candidates.push((form, s));
                    }
                }
            }
            for candidate in candidates {
                let mut trial = choices.clone();
                trial[f] = candidate;
                if trial
                    .iter()
                    .all(|(form, _)| matches!(form, Form::Const | Form::Attach))
                {
                    continue;
                }
                let tokens = self.table_cost(table, &trial, rows.clone(), &keys, level, depth)?;
                if tokens < best {
                    best = tokens;
                    choices = trial;
                }
            }
        }
        self.apply(table, &choices);
        self.search().tables.insert(key, choices);
        Ok(())
    }

    /// Sets a table's field plans to `choices`.
    fn apply(&self, table: &mut Table<'v, N>, choices: &[(Form, bool)]) {
        table.keys.truncate(table.shared_keys);
        let plans: Vec<_> = choices
            .iter()
            .enumerate()
            .map(|(f, &(form, shared))| self.field_plan(table, f, form, shared))
            .collect();
        table.fields = plans;
        self.finish_plan(table);
    }

    /// The tokens of a table with the field forms `choices`.
    fn table_cost<I>(
        &mut self,
        table: &mut Table<'v, N>,
        choices: &[(Form, bool)],
        rows: I,
        keys: &[Option<&'v str>],
        level: usize,
        depth: usize,
    ) -> Result<usize>
    where
        I: Iterator<Item = N> + Clone,
    {
        self.apply(table, choices);
        let table = &*table;
        let n = keys.len();
        self.cost(|e| {
            let rows = keys.iter().copied().zip(rows);
            e.table(Head::Member(""), table, rows, n, depth, level)
        })
    }
}

/// Whether some row's object for field `f` has every key of the field's sparse union, each
/// null: flattened, it would read back as a null object.
fn all_null_rows<'v, N: Node<'v>, I: Iterator<Item = N>>(
    table: &Table<'v, N>,
    f: usize,
    rows: I,
) -> bool {
    let (Some(name), Some(union)) = (table.names.get(f), table.sparse.get(f)) else {
        return true;
    };
    rows.filter_map(|row| row.get(name))
        .filter(|value| value.is_object())
        .any(|object| object.len() == union.len() && object.members().all(|(_, v)| v.is_null()))
}
