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

use super::encode::{write_scalar, Encoder};
use super::plan::Table;
use super::view::Node;
use crate::error::{Error, ErrorKind, Result};
use crate::lex;
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
            return self.value(super::encode::Head::Root, root, 0, 0);
        };
        let (key, group) = (grouping.key.as_str(), grouping.group.as_str());
        let table = self.group_plan(root, key, group)?;
        let written = self.grouped(root, &table, key, group);
        self.give_table(table);
        written
    }

    /// Scans a root array for grouping by `group` with `key` as the identity column, or says
    /// why it cannot be.
    pub(crate) fn group_plan(&mut self, root: N, key: &str, group: &str) -> Result<Table<'v, N>> {
        if !root.is_array() {
            return Err(not_groupable("the root must be an array"));
        }
        if root.len() == 0 {
            return Err(not_groupable("the array is empty"));
        }
        if key == group {
            return Err(not_groupable("the key and group columns must differ"));
        }
        if root.elements().any(|row| !row.is_object()) {
            return Err(not_groupable("every element must be an object"));
        }
        self.enter(2)?;
        let mut allow = self.allow(true, false);
        allow.flatten = false;
        allow.inline = false;
        allow.shared = false;
        allow.gt_attach = false;
        let mut table = self.take_table();
        self.scan(&mut table, root.elements(), allow, 2);
        let n = root.len();
        let problem = self.group_problem(&table, root, key, group, n);
        if let Some(why) = problem {
            self.give_table(table);
            return Err(not_groupable(&why));
        }
        self.canonical(&mut table, n, allow);
        Ok(table)
    }

    /// Why a scanned root table cannot be grouped, if it cannot.
    fn group_problem(
        &self,
        table: &Table<'v, N>,
        root: N,
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
            .find_map(|(name, facts)| (facts.objects + facts.arrays > 0).then_some(name))
        {
            return Some(format!(
                "grouped records hold scalars only, and column {name:?} holds a nested value"
            ));
        }
        let facts = &table.facts;
        if facts[k].present as usize != n || facts[k].nulls > 0 {
            return Some(format!(
                "the key column {key:?} must be present and not null in every record"
            ));
        }
        if facts[g].present as usize != n {
            return Some(format!(
                "the group column {group:?} must be present in every record"
            ));
        }
        let mut seen = std::collections::HashSet::new();
        let mut text = String::new();
        for row in root.elements() {
            text.clear();
            let scalar = row.get(key).and_then(Node::scalar);
            if let Some(scalar) = scalar {
                if write_scalar(&mut text, scalar, true).is_err() {
                    return None; // the write reports it
                }
            }
            if !seen.insert(text.clone()) {
                return Some(format!(
                    "the key column {key:?} must be unique, and {text} repeats"
                ));
            }
        }
        None
    }

    /// Writes a grouped root table (planned by [`Encoder::group_plan`]).
    pub(crate) fn grouped(
        &mut self,
        root: N,
        table: &Table<'v, N>,
        key: &str,
        group: &str,
    ) -> Result<()> {
        use super::plan::Form;
        let rows: Vec<N> = root.elements().collect();
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
        self.out.push_str("## [");
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
                    super::encode::write_const(&mut self.out, scalar)?;
                }
            } else {
                lex::write_key(&mut self.out, name);
            }
        }
        self.out.push_str("} group=");
        lex::write_key(&mut self.out, group);
        self.out.push('\n');
        for (value, members) in &order {
            lex::write_key(&mut self.out, group);
            self.out.push('=');
            self.out.push_str(value);
            self.out.push_str(" [");
            number::write_u64(&mut self.out, members.len() as u64);
            self.out.push_str("]\n");
            for &r in members {
                let row = rows[r];
                let mut first = true;
                for (name, field) in table.names.iter().zip(&table.fields) {
                    if *name == group || (*name != key && field.form == Form::Const) {
                        continue;
                    }
                    if !first {
                        self.out.push('|');
                    }
                    first = false;
                    match row.get(name).and_then(Node::scalar) {
                        Some(scalar) => write_scalar(&mut self.out, scalar, true)?,
                        None => self.out.push('~'),
                    }
                }
                self.out.push('\n');
            }
        }
        Ok(())
    }
}
