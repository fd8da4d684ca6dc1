//! Generic deltas (spec §10a.2, §10a.5) and the three-outcome reply (§10a.4).

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::pack_root::canonical_cell;
use super::{unsupported, write_cell, KeyedSet};
use crate::error::{Error, ErrorKind, Result};
use crate::generic::scalar_value;
use crate::header;
use crate::lex::{self, Count, DeclExtra, Line, Lines};
use crate::options::{DecoderOptions, Spec};

/// The rows added, changed and removed between two [`KeyedSet`]s with the same columns
/// (spec §10a.2): what a producer sends a consumer that holds the base set.
///
/// ```text
/// GCF profile=generic tool=T delta=true base_root=R1 new_root=R2 key=id savings=P%
/// ## added [1]{@id,total,status}
/// 1004|75|pending
/// ## changed [1]{@id,total,status}
/// 1002|29.99|shipped
/// ## removed [1]{@id}
/// 1001
/// ```
///
/// A changed row replaces the base's row with its identity (no field-level patch); rows the
/// delta does not name are kept. [`GenericDelta::apply`] checks both roots, so a consumer
/// holding another base, or a delta that does not produce what its producer had, is caught.
///
/// ```
/// use agentwire_gcf::{GenericDelta, KeyedSet};
/// use serde_json::json;
///
/// let base = KeyedSet::from_value(&json!([
///     {"id": 1, "status": "open"}, {"id": 2, "status": "open"}
/// ]), "id")?;
/// let new = KeyedSet::from_value(&json!([
///     {"id": 2, "status": "closed"}, {"id": 3, "status": "open"}
/// ]), "id")?;
/// let delta = GenericDelta::between(&base, &new)?;
/// let text = delta.encode()?;
/// assert!(text.ends_with(concat!(
///     " key=id\n",
///     "## added [1]{@id,status}\n3|open\n",
///     "## changed [1]{@id,status}\n2|closed\n",
///     "## removed [1]{@id}\n1\n",
/// )));
/// let applied = GenericDelta::decode(&text)?.apply(&base)?;
/// assert_eq!(applied.pack_root()?, new.pack_root()?);
/// # Ok::<(), agentwire_gcf::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct GenericDelta {
    /// `tool=`.
    pub tool: Option<String>,
    /// `key=`: the identity column.
    pub key: String,
    /// The columns of the rows (of `## added` and `## changed`).
    pub fields: Vec<String>,
    /// `base_root=`: the pack root of the set the delta applies to.
    pub base_root: String,
    /// `new_root=`: the pack root of the set it makes.
    pub new_root: String,
    /// `## added`: rows whose identity the base does not have.
    pub added: Vec<Map<String, Value>>,
    /// `## changed`: rows that replace the base's rows of the same identity.
    pub changed: Vec<Map<String, Value>>,
    /// `## removed`: identities of base rows that are gone.
    pub removed: Vec<Value>,
    /// `savings=P%`: the saving over the full payload, in percent.
    pub savings: Option<i64>,
}

impl GenericDelta {
    /// The delta from `base` to `new`: rows of `new` whose identity `base` lacks are added,
    /// rows whose values differ are changed, identities `new` lacks are removed; each section
    /// in the byte order of the canonical identities (deterministic output, §10a.6).
    ///
    /// Fails with `unsupported_value` when the two sets have different identity columns or
    /// fields (a schema change is sent in full, §10a.7), or for a set
    /// [`KeyedSet::from_rows`] refuses.
    pub fn between(base: &KeyedSet, new: &KeyedSet) -> Result<GenericDelta> {
        base.validate()?;
        new.validate()?;
        if base.key != new.key || base.fields != new.fields {
            return Err(unsupported(
                "the sets have different columns: a schema change is sent as a full payload \
                 (spec §10a.7)",
            ));
        }
        let base_rows = index(base)?;
        let new_rows = index(new)?;
        let mut added = Vec::new();
        let mut changed = Vec::new();
        for (id, row) in &new_rows {
            match base_rows.get(id) {
                None => added.push((id.clone(), (*row).clone())),
                Some(old) => {
                    if !same_row(old, row, &new.fields)? {
                        changed.push((id.clone(), (*row).clone()));
                    }
                }
            }
        }
        let mut removed: Vec<(String, Value)> = base_rows
            .iter()
            .filter(|(id, _)| !new_rows.contains_key(*id))
            .map(|(id, row)| {
                (
                    id.clone(),
                    row.get(&base.key).cloned().unwrap_or(Value::Null),
                )
            })
            .collect();
        added.sort_by(|a, b| a.0.cmp(&b.0));
        changed.sort_by(|a, b| a.0.cmp(&b.0));
        removed.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(GenericDelta {
            tool: None,
            key: new.key.clone(),
            fields: new.fields.clone(),
            base_root: base.pack_root()?,
            new_root: new.pack_root()?,
            added: added.into_iter().map(|(_, row)| row).collect(),
            changed: changed.into_iter().map(|(_, row)| row).collect(),
            removed: removed.into_iter().map(|(_, id)| id).collect(),
            savings: None,
        })
    }

    /// Whether the delta changes nothing.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.changed.is_empty() && self.removed.is_empty()
    }

    /// Sets `savings=` to the saving over a full payload of `full_tokens`:
    /// `100 × (1 − delta/full)` rounded half-to-even (none when `full_tokens` is 0).
    pub fn set_token_counts(&mut self, delta_tokens: u64, full_tokens: u64) {
        self.savings = (full_tokens > 0).then(|| crate::root::savings(delta_tokens, full_tokens));
    }

    /// Encodes the delta payload: the header, then `## added`, `## changed` and
    /// `## removed`, each left out when empty. Fails with `unsupported_value` for a row with
    /// a field the delta does not declare or a value that is not a scalar, or a header value
    /// that is not printable ASCII without spaces; `out_of_range` for an integer outside the
    /// signed 64-bit domain.
    pub fn encode(&self) -> Result<String> {
        if self.has_rows() && !self.fields.contains(&self.key) {
            return Err(unsupported(format!(
                "the identity column {:?} is not one of the fields",
                self.key
            )));
        }
        let mut out = String::with_capacity(
            256 + 32 * self.fields.len() * (self.added.len() + self.changed.len())
                + 16 * self.removed.len(),
        );
        out.push_str("GCF profile=generic");
        if let Some(tool) = &self.tool {
            header::write_field(&mut out, "tool", tool)?;
        }
        out.push_str(" delta=true");
        header::write_field(&mut out, "base_root", &self.base_root)?;
        header::write_field(&mut out, "new_root", &self.new_root)?;
        header::write_field(&mut out, "key", &self.key)?;
        if let Some(savings) = self.savings {
            let text = format!("{savings}%");
            header::write_field(&mut out, "savings", &text)?;
        }
        out.push('\n');
        for (name, rows) in [("added", &self.added), ("changed", &self.changed)] {
            if rows.is_empty() {
                continue;
            }
            for (i, row) in rows.iter().enumerate() {
                if let Some(field) = row.keys().find(|f| !self.fields.contains(f)) {
                    return Err(unsupported(format!(
                        "{name}[{i}] has the undeclared field {field:?}"
                    )));
                }
            }
            out.push_str("## ");
            out.push_str(name);
            out.push(' ');
            super::write_table(&mut out, &self.key, &self.fields, rows)?;
        }
        if !self.removed.is_empty() {
            out.push_str("## removed [");
            out.push_str(itoa::Buffer::new().format(self.removed.len()));
            out.push_str("]{@");
            lex::write_key(&mut out, &self.key);
            out.push_str("}\n");
            for id in &self.removed {
                write_cell(&mut out, id)?;
                out.push('\n');
            }
        }
        Ok(out)
    }

    /// Decodes a delta payload (`delta=true`) with the default [`DecoderOptions`]. Sections
    /// other than `added`, `changed` and `removed`, a section twice, columns that differ
    /// between them or whose identity is not `key=`, and rows with `~`, attachments or `@N`
    /// are `malformed_delta`; counts are checked (`count_mismatch`).
    pub fn decode(text: &str) -> Result<GenericDelta> {
        DecoderOptions::new().decode_generic_delta(text)
    }

    /// Applies the delta to `base`, atomically (spec §10a.5): checks that `base`'s root is
    /// `base_root` (`root_mismatch` otherwise) and that its columns are the delta's
    /// (`malformed_delta`); validates every operation against the base before changing
    /// anything (`malformed_delta` for an added identity that already exists, a changed or
    /// removed one that does not, or one identity named twice); builds the result on a copy
    /// (the base's rows in order, changed ones replaced, removed ones dropped, added ones
    /// appended); and checks that its root is `new_root` (`root_mismatch`). `base` is never
    /// modified.
    pub fn apply(&self, base: &KeyedSet) -> Result<KeyedSet> {
        base.validate()?;
        let base_root = base.pack_root()?;
        if base_root != self.base_root {
            return Err(Error::new(
                ErrorKind::RootMismatch,
                format!(
                    "the base's pack root is {base_root}, the delta applies to {}",
                    self.base_root
                ),
            ));
        }
        if base.key != self.key || (self.has_rows() && base.fields != self.fields) {
            return Err(malformed(format!(
                "the delta's columns ({} with identity {:?}) are not the base's ({} with \
                 identity {:?})",
                self.fields.join(","),
                self.key,
                base.fields.join(","),
                base.key
            )));
        }
        let mut positions: HashMap<String, usize> = HashMap::with_capacity(base.rows.len());
        for (i, row) in base.rows.iter().enumerate() {
            positions.insert(identity(row, &base.key)?, i);
        }
        let mut named: HashSet<String> = HashSet::new();
        let mut name = |id: &str, section: &str| {
            if named.insert(id.to_owned()) {
                Ok(())
            } else {
                Err(malformed(format!(
                    "identity {id} is named twice in the delta (again in ## {section})"
                )))
            }
        };
        let mut removed = vec![false; base.rows.len()];
        for id in &self.removed {
            let id = canonical_cell(id)?;
            name(&id, "removed")?;
            match positions.get(&id) {
                Some(&i) => removed[i] = true,
                None => {
                    return Err(malformed(format!(
                        "removing identity {id}, which the base does not have"
                    )))
                }
            }
        }
        let mut rows = base.rows.clone();
        for row in &self.changed {
            let id = identity(row, &self.key)?;
            name(&id, "changed")?;
            match positions.get(&id) {
                Some(&i) => rows[i] = row.clone(),
                None => {
                    return Err(malformed(format!(
                        "changing identity {id}, which the base does not have"
                    )))
                }
            }
        }
        for row in &self.added {
            let id = identity(row, &self.key)?;
            name(&id, "added")?;
            if positions.contains_key(&id) {
                return Err(malformed(format!(
                    "adding identity {id}, which already exists in the base"
                )));
            }
        }
        let mut rows: Vec<Map<String, Value>> = rows
            .into_iter()
            .zip(&removed)
            .filter(|(_, gone)| !**gone)
            .map(|(row, _)| row)
            .collect();
        rows.extend(self.added.iter().cloned());
        let result = KeyedSet {
            name: base.name.clone(),
            key: base.key.clone(),
            fields: base.fields.clone(),
            rows,
        };
        result.validate()?;
        let root = result.pack_root()?;
        if root != self.new_root {
            return Err(Error::new(
                ErrorKind::RootMismatch,
                format!(
                    "the applied set's pack root is {root}, the delta declares new_root={}",
                    self.new_root
                ),
            ));
        }
        Ok(result)
    }

    fn has_rows(&self) -> bool {
        !self.added.is_empty() || !self.changed.is_empty()
    }
}

/// The rows of a set by canonical identity.
fn index(set: &KeyedSet) -> Result<HashMap<String, &Map<String, Value>>> {
    set.rows
        .iter()
        .map(|row| Ok((identity(row, &set.key)?, row)))
        .collect()
}

/// A row's identity in canonical form.
fn identity(row: &Map<String, Value>, key: &str) -> Result<String> {
    canonical_cell(row.get(key).unwrap_or(&Value::Null))
}

/// Whether two rows hold the same values (canonically) in every field.
fn same_row(a: &Map<String, Value>, b: &Map<String, Value>, fields: &[String]) -> Result<bool> {
    for f in fields {
        let null = Value::Null;
        if canonical_cell(a.get(f).unwrap_or(&null))? != canonical_cell(b.get(f).unwrap_or(&null))?
        {
            return Ok(false);
        }
    }
    Ok(true)
}

#[cold]
fn malformed(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::MalformedDelta, message)
}

impl DecoderOptions {
    /// [`GenericDelta::decode`] with these options' limits (always by the current spec:
    /// generic deltas are v3.3).
    pub fn decode_generic_delta(&self, text: &str) -> Result<GenericDelta> {
        let limits = &self.limits;
        let mut lines = Lines::new(text, limits.max_line_length);
        let head = header::read_header(&mut lines)?;
        if head.profile != header::Profile::Generic {
            return Err(head.line.error(
                ErrorKind::ProfileMismatch,
                "this is a graph payload; decode a graph delta with `Delta::decode`",
            ));
        }
        if head.get("delta") != Some("true") {
            return Err(head.line.error(
                ErrorKind::MalformedDelta,
                "a delta payload's header says delta=true",
            ));
        }
        let required = |key: &str| {
            head.get(key).map(str::to_owned).ok_or_else(|| {
                head.line.error(
                    ErrorKind::MalformedDelta,
                    format!("a delta payload's header declares {key}= (spec §10a.2)"),
                )
            })
        };
        let mut delta = GenericDelta {
            tool: head.get("tool").map(str::to_owned),
            key: required("key")?,
            base_root: required("base_root")?,
            new_root: required("new_root")?,
            ..GenericDelta::default()
        };
        if let Some(savings) = head.get("savings") {
            delta.savings = Some(crate::root::parse_savings(savings).ok_or_else(|| {
                head.error_at(
                    "savings",
                    ErrorKind::MalformedHeaderField,
                    format!("savings={savings} is not N%"),
                )
            })?);
        }
        let mut seen: Vec<&str> = Vec::new();
        let mut fields_line: Option<usize> = None;
        while let Some(line) = lines.next()? {
            if line.indent != 0 {
                return Err(line.error(
                    ErrorKind::InvalidIndent,
                    "a delta payload's lines are not indented",
                ));
            }
            if header::is_metadata(&line) {
                header::parse_summary(line)?;
                if let Some(after) = lines.next()? {
                    return Err(after.error(
                        ErrorKind::InvalidLine,
                        "nothing may follow the `##! summary` trailer",
                    ));
                }
                break;
            }
            let Some(rest) = line.text.strip_prefix("## ") else {
                return Err(line.error(
                    ErrorKind::MalformedDelta,
                    "a delta payload holds `## added`, `## changed` and `## removed` sections",
                ));
            };
            let name_len = lex::bare_key_len(rest);
            let name = &rest[..name_len];
            if !matches!(name, "added" | "changed" | "removed") {
                return Err(line.error_at(
                    ErrorKind::MalformedDelta,
                    rest,
                    format!(
                        "unknown delta section `## {}` (a generic delta has added, changed \
                         and removed)",
                        if name.is_empty() { rest } else { name }
                    ),
                ));
            }
            if seen.contains(&name) {
                return Err(line.error_at(
                    ErrorKind::MalformedDelta,
                    name,
                    format!("a second `## {name}` section"),
                ));
            }
            seen.push(name);
            let Some(bracket) = rest[name_len..]
                .strip_prefix(' ')
                .filter(|b| b.starts_with('['))
            else {
                return Err(line.error_at(
                    ErrorKind::MalformedDelta,
                    rest,
                    format!("a delta section is `## {name} [N]{{@key,...}}`"),
                ));
            };
            let (count, keyed, decl) = lex::table_count(&line, bracket, false)?;
            if keyed || !decl.starts_with('{') {
                return Err(line.error_at(
                    ErrorKind::MalformedDelta,
                    bracket,
                    format!("a delta section is `## {name} [N]{{@key,...}}`"),
                ));
            }
            let names = keyed_columns(
                &line,
                count,
                bracket,
                decl,
                &delta.key,
                ErrorKind::MalformedDelta,
                limits,
            )?;
            if name == "removed" {
                if names.len() != 1 {
                    return Err(line.error_at(
                        ErrorKind::MalformedDelta,
                        decl,
                        format!(
                            "`## removed` declares the identity alone: {{@{}}}",
                            delta.key
                        ),
                    ));
                }
            } else {
                match fields_line {
                    Some(_) if names != delta.fields => {
                        return Err(line.error_at(
                            ErrorKind::MalformedDelta,
                            decl,
                            "`## added` and `## changed` declare different columns",
                        ))
                    }
                    _ => {
                        delta.fields = names.clone();
                        fields_line = Some(line.number);
                    }
                }
            }
            for (_, values) in keyed_rows(&mut lines, &line, count, bracket, name, &names, limits)?
            {
                if name == "removed" {
                    delta.removed.extend(values.into_iter().map(|(_, v)| v));
                } else {
                    let row: Map<String, Value> = values.into_iter().collect();
                    if name == "added" {
                        delta.added.push(row);
                    } else {
                        delta.changed.push(row);
                    }
                }
            }
        }
        if fields_line.is_none() {
            delta.fields = if seen.contains(&"removed") {
                vec![delta.key.clone()]
            } else {
                Vec::new()
            };
        }
        Ok(delta)
    }
}

/// The columns of a keyed table's field declaration `decl` (after the count bracket
/// `bracket`, checked against the limits): exactly one identity column, named `key`, and no
/// constants; otherwise `invalid`.
pub(super) fn keyed_columns(
    line: &Line<'_>,
    count: Count,
    bracket: &str,
    decl: &str,
    key: &str,
    invalid: ErrorKind,
    limits: &crate::Limits,
) -> Result<Vec<String>> {
    if let Count::Known(n) = count {
        if n > limits.max_elements as u64 {
            return Err(line.error_at(
                ErrorKind::LimitExceeded(crate::Limit::Elements),
                bracket,
                format!(
                    "declared count {n} exceeds the limit of {} elements",
                    limits.max_elements
                ),
            ));
        }
    }
    let mut names = Vec::new();
    let mut extras: Vec<DeclExtra<'_>> = Vec::new();
    let after = lex::field_decl_ext(
        line,
        decl,
        limits.max_fields,
        ErrorKind::InvalidKey,
        ErrorKind::InvalidLine,
        &mut names,
        Some(&mut extras),
    )?;
    if !lex::trim(after).is_empty() {
        return Err(line.error_at(
            ErrorKind::InvalidLine,
            after,
            "unexpected text after the field declaration",
        ));
    }
    let identities: Vec<usize> = extras
        .iter()
        .filter(|e| e.identity)
        .map(|e| e.index)
        .collect();
    if extras.iter().any(|e| e.value.is_some())
        || identities.len() != 1
        || names[identities[0]] != key
    {
        return Err(line.error_at(
            invalid,
            decl,
            format!(
                "a keyed table declares its columns with exactly one identity `@{key}` (the \
                 header's key=) and no constants"
            ),
        ));
    }
    Ok(names.into_iter().map(|n| n.into_owned()).collect())
}

/// A keyed table's row: its line and its `(field, value)` cells.
pub(super) type KeyedRow<'a> = (Line<'a>, Vec<(String, Value)>);

/// The rows of a keyed table `## name ...` declared on `line` with `count` (at `bracket`):
/// scalar rows up to the next `##` line or the end, checked against the count.
pub(super) fn keyed_rows<'a>(
    lines: &mut Lines<'a>,
    line: &Line<'_>,
    count: Count,
    bracket: &str,
    name: &str,
    names: &[String],
    limits: &crate::Limits,
) -> Result<Vec<KeyedRow<'a>>> {
    let mut rows = Vec::new();
    while let Some(row) = lines.peek()? {
        if row.text.starts_with("##") || matches!(count, Count::Known(n) if rows.len() as u64 == n)
        {
            break;
        }
        lines.advance();
        if rows.len() >= limits.max_elements {
            return Err(row.error(
                ErrorKind::LimitExceeded(crate::Limit::Elements),
                format!("more than {} rows in a section", limits.max_elements),
            ));
        }
        rows.push((row, delta_row(&row, names)?));
    }
    if let Count::Known(n) = count {
        if rows.len() as u64 != n {
            return Err(line.error_at(
                ErrorKind::CountMismatch,
                bracket,
                format!(
                    "`## {name}` declares [{n}] rows, the section has {}",
                    rows.len()
                ),
            ));
        }
    }
    if let Some(next) = lines.peek()? {
        if !next.text.starts_with("##") {
            return Err(next.error(
                ErrorKind::CountMismatch,
                format!("more rows than `## {name}` declares"),
            ));
        }
    }
    Ok(rows)
}

/// The cells of a delta row as `(field, value)`: scalars only, every column present.
fn delta_row(line: &Line<'_>, names: &[String]) -> Result<Vec<(String, Value)>> {
    let text = line.text;
    if text.starts_with('@') {
        return Err(line.error(
            ErrorKind::MalformedDelta,
            "a delta row carries no `@N` prefix (its values are scalars)",
        ));
    }
    let cells: Vec<&str> = lex::cells(text, b'|').collect();
    if cells.len() != names.len() {
        return Err(line.error(
            ErrorKind::RowWidthMismatch,
            format!(
                "row has {} cells but the section declares {} fields",
                cells.len(),
                names.len()
            ),
        ));
    }
    let mut values = Vec::with_capacity(names.len());
    for (name, token) in names.iter().zip(cells) {
        if token == "~" || token == "^" || (token.starts_with("^{") && token.ends_with('}')) {
            return Err(line.error_at(
                ErrorKind::MalformedDelta,
                token,
                "a delta row has a scalar in every column (no `~` or attachment)",
            ));
        }
        values.push((name.clone(), scalar_value(Spec::V3_6, line, token)?));
    }
    Ok(values)
}

/// Any generic payload of a keyed set's exchange (spec §10a.4): the full set, a delta
/// against the consumer's set, or the reply that the consumer's set is still current.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum GenericPayload {
    /// The full set (`tool=` with it).
    Full {
        /// The set.
        set: KeyedSet,
        /// `tool=`.
        tool: Option<String>,
    },
    /// A delta against the consumer's set.
    Delta(GenericDelta),
    /// `unchanged=true`: the consumer's set is current.
    Unchanged {
        /// `tool=`.
        tool: Option<String>,
        /// `pack_root=`: the root the consumer holds.
        pack_root: String,
        /// `count=`: the set's rows.
        count: Option<u64>,
    },
}

impl GenericPayload {
    /// The three-outcome reply of spec §10a.4 to a consumer that holds `base` (or nothing):
    /// the full set without a base; [`GenericPayload::Unchanged`] when the roots and columns
    /// are equal; otherwise a delta when the two sets have the same columns and its encoding
    /// is under 60% of the full payload's (§10a.2), else the full set.
    ///
    /// ```
    /// use agentwire_gcf::{GenericPayload, KeyedSet};
    /// use serde_json::json;
    ///
    /// let rows: Vec<_> = (0..100).map(|i| json!({"id": i, "v": "a longer value"})).collect();
    /// let base = KeyedSet::from_value(&json!(rows), "id")?;
    /// let mut current = base.clone();
    /// current.rows[3].insert("v".into(), json!("y"));
    /// assert!(matches!(GenericPayload::respond(Some(&base), &base, None)?, GenericPayload::Unchanged { .. }));
    /// let reply = GenericPayload::respond(Some(&base), &current, None)?;
    /// let GenericPayload::Delta(delta) = GenericPayload::decode(&reply.encode()?)? else { panic!() };
    /// assert_eq!(delta.apply(&base)?, current);
    /// # Ok::<(), agentwire_gcf::Error>(())
    /// ```
    pub fn respond(
        base: Option<&KeyedSet>,
        current: &KeyedSet,
        tool: Option<&str>,
    ) -> Result<GenericPayload> {
        let full = GenericPayload::Full {
            set: current.clone(),
            tool: tool.map(str::to_owned),
        };
        let Some(base) = base else {
            return Ok(full);
        };
        let root = current.pack_root()?;
        // Equal roots with other columns (an empty set, or a new column no row fills) are
        // a schema change all the same: sent in full (§10a.7).
        let same_columns = base.key == current.key && base.fields == current.fields;
        if same_columns && base.pack_root()? == root {
            return Ok(GenericPayload::Unchanged {
                tool: tool.map(str::to_owned),
                pack_root: root,
                count: Some(current.rows.len() as u64),
            });
        }
        let mut delta = match GenericDelta::between(base, current) {
            Ok(delta) => delta,
            Err(e) if e.kind() == ErrorKind::UnsupportedValue => return Ok(full),
            Err(e) => return Err(e),
        };
        delta.tool = tool.map(str::to_owned);
        if delta.encode()?.len() * 10 < full.encode()?.len() * 6 {
            Ok(GenericPayload::Delta(delta))
        } else {
            Ok(full)
        }
    }

    /// Encodes the payload.
    pub fn encode(&self) -> Result<String> {
        match self {
            GenericPayload::Full { set, tool } => set.encode(tool.as_deref()),
            GenericPayload::Delta(delta) => delta.encode(),
            GenericPayload::Unchanged {
                tool,
                pack_root,
                count,
            } => {
                let mut out = String::from("GCF profile=generic");
                if let Some(tool) = tool {
                    header::write_field(&mut out, "tool", tool)?;
                }
                out.push_str(" unchanged=true");
                header::write_field(&mut out, "pack_root", pack_root)?;
                if let Some(n) = count {
                    header::write_field(&mut out, "count", itoa::Buffer::new().format(*n))?;
                }
                out.push('\n');
                Ok(out)
            }
        }
    }

    /// Decodes any of the three payloads, by the header (`delta=true`, `unchanged=true`, or
    /// a full set with `key=`).
    pub fn decode(text: &str) -> Result<GenericPayload> {
        DecoderOptions::new().decode_generic_payload(text)
    }
}

impl DecoderOptions {
    /// [`GenericPayload::decode`] with these options.
    pub fn decode_generic_payload(&self, text: &str) -> Result<GenericPayload> {
        let mut lines = Lines::new(text, self.limits.max_line_length);
        let head = header::read_header(&mut lines)?;
        if head.get("delta") == Some("true") {
            return self.decode_generic_delta(text).map(GenericPayload::Delta);
        }
        if head.get("unchanged") == Some("true") {
            if head.profile != header::Profile::Generic {
                return Err(head.line.error(
                    ErrorKind::ProfileMismatch,
                    "this is a graph payload; decode it with `decode_payload`",
                ));
            }
            let pack_root = head.get("pack_root").ok_or_else(|| {
                head.line.error(
                    ErrorKind::MalformedHeaderField,
                    "an unchanged=true reply carries the pack_root it confirms",
                )
            })?;
            let count = match head.get("count") {
                None => None,
                Some(n) => Some(n.parse::<u64>().map_err(|_| {
                    head.error_at(
                        "count",
                        ErrorKind::MalformedHeaderField,
                        format!("count={n} is not a count"),
                    )
                })?),
            };
            if let Some(line) = lines.next()? {
                return Err(line.error(
                    ErrorKind::InvalidLine,
                    "an unchanged=true reply is the header line alone",
                ));
            }
            return Ok(GenericPayload::Unchanged {
                tool: head.get("tool").map(str::to_owned),
                pack_root: pack_root.to_owned(),
                count,
            });
        }
        let tool = head.get("tool").map(str::to_owned);
        let set = self.decode_keyed_set(text)?;
        Ok(GenericPayload::Full { set, tool })
    }
}
