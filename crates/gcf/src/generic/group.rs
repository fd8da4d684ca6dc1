//! Value grouping (spec v3.6 §7.4.8, opt-in, as gcf-python's and the `gcf` crate's
//! `encode_generic_grouped` write it): a root array of records as a keyed set clustered by
//! the values of one column.
//!
//! ```text
//! ## [4]{@id,kind,line} group=kind
//! kind=method [2]
//! 1|10
//! 2|20
//! kind=field [2]
//! 3|30
//! 4|40
//! ```
//!
//! The key column is marked `@`; the grouping column leaves the rows, each group announces
//! its value and count; other constant columns are factored into the header.

use std::collections::HashMap;

use super::encode::{write_const, write_scalar, Encoder, Head};
use super::plan::{Form, Table};
use super::view::Node;
use super::view::{ARRAY, NULL, OBJECT};
use crate::error::{Error, ErrorKind, Result};
use crate::lex::{self, Place, Sink};
use crate::number;

#[cold]
fn not_groupable(why: &str) -> Error {
    Error::new(
        ErrorKind::UnsupportedValue,
        format!("value grouping (EncoderOptions::value_grouping): {why}"),
    )
}

impl<'v, N: Node<'v>> Encoder<'v, '_, N> {
    /// Writes the root, value-grouped by the options' columns.
    pub(crate) fn grouped_root(&mut self, root: N) -> Result<()> {
        let Some(grouping) = self.opts.grouping.as_ref() else {
            return self.value(Head::Root, root, 0, 0);
        };
        let (key, group) = (grouping.key.as_str(), grouping.group.as_str());
        if !root.is_array() {
            return Err(not_groupable("the root must be an array"));
        }
        self.enter(1)?;
        self.write_grouped(Head::Root, root, key, group, 0)
    }

    /// Scans an array (at nesting level 1) for grouping by `group` with `key` as the identity
    /// column, or says why it cannot be.
    pub(crate) fn group_plan(
        &mut self,
        items: N,
        key: &str,
        group: &str,
    ) -> Result<Box<Table<'v, N>>> {
        if items.len() == 0 {
            return Err(not_groupable("the array is empty"));
        }
        if key == group {
            return Err(not_groupable("the key and group columns must differ"));
        }
        if items.elements().any(|row| !row.is_object()) {
            return Err(not_groupable("every element must be an object"));
        }
        self.enter(2)?;
        let table = self.group_scan(items);
        let n = items.len();
        if let Some(why) = self.group_problem(&table, items, key, group, n) {
            self.give_table(table);
            return Err(not_groupable(&why));
        }
        Ok(table)
    }

    /// The scan and canonical plan of an array's records for grouping: constants, no
    /// flattening, schemas or attachments.
    fn group_scan(&mut self, items: N) -> Box<Table<'v, N>> {
        let mut allow = self.allow(true, false);
        allow.flatten = false;
        allow.inline = false;
        allow.shared = false;
        allow.gt_attach = false;
        allow.constants = true;
        let mut table = self.take_table();
        self.scan(&mut table, items.elements(), allow, 2);
        self.canonical(&mut table, items.len(), allow);
        table
    }

    /// Why a scanned table cannot be grouped, if it cannot.
    fn group_problem(
        &self,
        table: &Table<'v, N>,
        items: N,
        key: &str,
        group: &str,
        n: usize,
    ) -> Option<String> {
        let Some(k) = table.names.iter().position(|name| *name == key) else {
            return Some(format!("no record has the key column {key:?}"));
        };
        let Some(g) = table.names.iter().position(|name| *name == group) else {
            return Some(format!("no record has the group column {group:?}"));
        };
        if let Some(name) = table
            .names
            .iter()
            .zip(&table.facts)
            .find_map(|(name, facts)| facts.has(OBJECT | ARRAY).then_some(name))
        {
            return Some(format!(
                "grouped records hold scalars only, and column {name:?} holds a nested value"
            ));
        }
        let facts = &table.facts;
        if facts[k].present as usize != n || facts[k].has(NULL) {
            return Some(format!(
                "the key column {key:?} must be present and not null in every record"
            ));
        }
        if facts[g].present as usize != n {
            return Some(format!(
                "the group column {group:?} must be present in every record"
            ));
        }
        if !self.unique(items, key) {
            return Some(format!("the key column {key:?} must be unique"));
        }
        None
    }

    /// Whether the values of column `key` (present in every record) are written differently.
    fn unique(&self, items: N, key: &str) -> bool {
        let mut seen = std::collections::HashSet::new();
        for row in items.elements() {
            let mut text = String::new();
            if let Some(scalar) = row.get(key).and_then(Node::scalar) {
                if write_scalar(&mut text, scalar, true).is_err() {
                    return false;
                }
            }
            if !seen.insert(text) {
                return false;
            }
        }
        true
    }

    /// The columns a fewest-tokens encoding may group an array's records by without loss:
    /// the first column whose values are unique as the key, and each other column that every
    /// record has, whose records of one value are adjacent (the order is kept) and that
    /// repeats a value (else grouping cannot save). `None` if the records are not all scalars.
    pub(crate) fn group_candidates(&mut self, items: N) -> Option<(&'v str, Vec<&'v str>)> {
        if items.len() < 2 || items.elements().any(|row| !row.is_object()) {
            return None;
        }
        let table = self.group_scan(items);
        let n = items.len();
        let scalars = table.facts.iter().all(|f| !f.has(OBJECT | ARRAY));
        let key = table
            .names
            .iter()
            .zip(&table.facts)
            .find_map(|(name, facts)| {
                (facts.present as usize == n && !facts.has(NULL) && self.unique(items, name))
                    .then_some(*name)
            });
        let candidates = match (scalars, key) {
            (true, Some(key)) => table
                .names
                .iter()
                .zip(&table.facts)
                .filter(|(name, facts)| **name != key && facts.present as usize == n)
                .filter(|(name, _)| adjacent_runs(items, name))
                .map(|(name, _)| *name)
                .take(4)
                .collect(),
            _ => Vec::new(),
        };
        self.give_table(table);
        let key = key?;
        (!candidates.is_empty()).then_some((key, candidates))
    }

    /// Plans and writes an array (its records at nesting level 2 at most) value-grouped by
    /// `group` with the identity column `key`.
    pub(crate) fn write_grouped(
        &mut self,
        head: Head<'_>,
        items: N,
        key: &str,
        group: &str,
        depth: usize,
    ) -> Result<()> {
        let table = self.group_plan(items, key, group)?;
        let written = self.grouped(head, items, &table, key, group, depth);
        self.give_table(table);
        written
    }

    /// Writes an array as a value-grouped table under `head` at `depth` (planned by
    /// [`Encoder::group_plan`] or chosen by the fewest-tokens search).
    pub(crate) fn grouped(
        &mut self,
        head: Head<'_>,
        items: N,
        table: &Table<'v, N>,
        key: &str,
        group: &str,
        depth: usize,
    ) -> Result<()> {
        let rows: Vec<N> = items.elements().collect();
        // Groups in order of first appearance, by their value as written.
        let mut order: Vec<(String, Vec<usize>)> = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
        let mut text = String::new();
        for (r, row) in rows.iter().enumerate() {
            text.clear();
            if let Some(scalar) = row.get(group).and_then(Node::scalar) {
                write_scalar(&mut text, scalar, true)?;
            }
            match index.get(&text) {
                Some(&at) => order[at].1.push(r),
                None => {
                    index.insert(text.clone(), order.len());
                    order.push((text.clone(), vec![r]));
                }
            }
        }
        head.write(&mut self.out, depth, false);
        self.out.push('[');
        number::write_u64(&mut self.out, rows.len() as u64);
        self.out.push_str("]{");
        for (j, (name, field)) in table.names.iter().zip(&table.fields).enumerate() {
            if j > 0 {
                self.out.push(',');
            }
            if *name == key {
                self.out.push('@');
                lex::write_key(&mut self.out, name);
            } else if *name != group && field.form == Form::Const {
                lex::write_key(&mut self.out, name);
                self.out.push('=');
                if let Some(scalar) = field.node.and_then(Node::scalar) {
                    write_const(&mut self.out, scalar)?;
                }
            } else {
                lex::write_key(&mut self.out, name);
            }
        }
        self.out.push_str("} group=");
        lex::write_key(&mut self.out, group);
        self.out.push('\n');
        let body = match head {
            Head::Root => 0,
            _ => depth,
        };
        for (value, members) in &order {
            self.out.indent(body);
            lex::write_key(&mut self.out, group);
            self.out.push('=');
            self.out.push_str(value);
            self.out.push_str(" [");
            number::write_u64(&mut self.out, members.len() as u64);
            self.out.push_str("]\n");
            for &r in members {
                let row = rows[r];
                self.out.indent(body);
                let mut first = true;
                for (name, field) in table.names.iter().zip(&table.fields) {
                    if *name == group || (*name != key && field.form == Form::Const) {
                        continue;
                    }
                    if !first {
                        self.out.push('|');
                    }
                    match row.get(name).and_then(Node::scalar) {
                        Some(scalar) => self.scalar(scalar, Place::Cell { first })?,
                        None => self.out.push('~'),
                    }
                    first = false;
                }
                self.out.push('\n');
            }
        }
        Ok(())
    }
}

/// Whether the records with one value of column `name` are adjacent, and some value
/// repeats.
fn adjacent_runs<'v, N: Node<'v>>(items: N, name: &str) -> bool {
    let mut seen: Vec<String> = Vec::new();
    let mut repeats = false;
    let mut text = String::new();
    for row in items.elements() {
        text.clear();
        if let Some(scalar) = row.get(name).and_then(Node::scalar) {
            if write_scalar(&mut text, scalar, true).is_err() {
                return false;
            }
        }
        if seen.last() == Some(&text) {
            repeats = true;
        } else if seen.contains(&text) {
            return false;
        } else {
            seen.push(text.clone());
        }
    }
    repeats
}
