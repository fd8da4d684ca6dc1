//! Keyed sets: the generic profile's unit of delta encoding (spec v3.3 §10a).
//!
//! A [`KeyedSet`] is a table whose rows are identified by one column (its `key`); its
//! [`pack_root`](KeyedSet::pack_root) names its content whatever the order of its rows
//! (§10a.3). A [`GenericDelta`] carries the rows added, changed and removed between two sets
//! and is applied atomically, verifying both roots (§10a.5); a [`GenericSession`] sends a
//! producer's successive sets as deltas, with a full payload on a re-anchor policy (§10a.8),
//! and a [`GenericSessionDecoder`] rebuilds each set on the consumer's side. The
//! three-outcome reply of §10a.4 is a [`GenericPayload`].
//!
//! The data flow, producer to consumer:
//!
//! ```text
//! KeyedSet ──encode──▶ full payload ──KeyedSet::decode──▶ KeyedSet (pack_root checked)
//! (base, new) ──GenericDelta::between──▶ GenericDelta ──encode/decode──▶ apply(base) ──▶ new
//! GenericSession::next(set) ──▶ full or delta ──▶ GenericSessionDecoder::decode ──▶ set
//! ```

mod delta;
mod pack_root;
mod session;

use serde_json::{Map, Value};

use crate::error::{Error, ErrorKind, Result};
use crate::header;
use crate::lex;
use crate::options::DecoderOptions;

pub use delta::{GenericDelta, GenericPayload};
pub use session::{Emission, GenericSession, GenericSessionDecoder, Reanchor};

/// The section name of a full payload whose set has no name (the reference encoders').
const DEFAULT_NAME: &str = "rows";

/// A keyed record set (spec §10a): rows identified by the values of one column, `key`.
///
/// Rows are objects of scalars (strings, numbers, booleans, `null`): delta rows are flat
/// tabular rows. A row without one of the declared `fields` reads as `null` there, as the
/// pack root and the wire form have it (a keyed row has every column; use `null` rather than
/// leaving a member out). Row order carries no meaning: the pack root and the delta are
/// those of the set.
///
/// ```
/// use agentwire_gcf::KeyedSet;
/// use serde_json::json;
///
/// let set = KeyedSet::from_value(
///     &json!({"orders": [
///         {"id": 1001, "status": "shipped", "total": 59.98},
///         {"id": 1002, "status": "pending", "total": 29.99},
///     ]}),
///     "id",
/// )?;
/// let text = set.encode(Some("orders_query"))?;
/// assert!(text.starts_with("GCF profile=generic tool=orders_query pack_root=sha256:"));
/// assert!(text.ends_with(" key=id\n## orders [2]{@id,status,total}\n1001|shipped|59.98\n1002|pending|29.99\n"));
/// assert_eq!(KeyedSet::decode(&text)?, set);
/// # Ok::<(), agentwire_gcf::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct KeyedSet {
    /// The section name of a full payload (`## orders [N]{...}`); empty for `rows`.
    pub name: String,
    /// The identity column (`key=` in the header, `@name` in the field declaration).
    pub key: String,
    /// The columns, in the order of the field declaration.
    pub fields: Vec<String>,
    /// The rows.
    pub rows: Vec<Map<String, Value>>,
}

impl KeyedSet {
    /// A set named `name` with identity column `key` and these `fields` (which must include
    /// `key`), and no rows yet.
    pub fn new(name: impl Into<String>, key: impl Into<String>, fields: Vec<String>) -> Self {
        KeyedSet {
            name: name.into(),
            key: key.into(),
            fields,
            rows: Vec::new(),
        }
    }

    /// The set of `rows`, its fields their union in first-seen order.
    pub fn from_rows(
        name: impl Into<String>,
        key: impl Into<String>,
        rows: Vec<Map<String, Value>>,
    ) -> Result<Self> {
        let mut fields: Vec<String> = Vec::new();
        for row in &rows {
            for name in row.keys() {
                if !fields.contains(name) {
                    fields.push(name.clone());
                }
            }
        }
        let set = KeyedSet {
            name: name.into(),
            key: key.into(),
            fields,
            rows,
        };
        set.validate()?;
        Ok(set)
    }

    /// The set a JSON value holds, with identity column `key`:
    ///
    /// - an array of objects: the rows (named `rows`);
    /// - an object with one member, an array of objects: that member's name and rows;
    /// - a keyed map, an object whose members are all objects (spec §7.2a): one row per
    ///   member, the member's key in column `key` first (§10a.7: a map's identity is its
    ///   key).
    ///
    /// Fails with `unsupported_value` for any other value, a row without `key`, a repeated
    /// identity, or a value that is not a scalar.
    pub fn from_value(value: &Value, key: &str) -> Result<Self> {
        let rows_of = |items: &[Value]| -> Result<Vec<Map<String, Value>>> {
            items
                .iter()
                .map(|item| match item {
                    Value::Object(row) => Ok(row.clone()),
                    other => Err(unsupported(format!(
                        "a keyed set's rows are objects, not {}",
                        kind_of(other)
                    ))),
                })
                .collect()
        };
        match value {
            Value::Array(items) => KeyedSet::from_rows("", key, rows_of(items)?),
            Value::Object(members) if members.len() == 1 => match members.iter().next() {
                Some((name, Value::Array(items))) => {
                    KeyedSet::from_rows(name.clone(), key, rows_of(items)?)
                }
                _ => KeyedSet::from_map(members, key),
            },
            Value::Object(members) => KeyedSet::from_map(members, key),
            _ => Err(unsupported(
                "a keyed set is an array of objects, an object holding one, or a map of objects",
            )),
        }
    }

    /// The rows of a keyed map: each member's object with its key in column `key`, first.
    fn from_map(members: &Map<String, Value>, key: &str) -> Result<Self> {
        let mut rows = Vec::with_capacity(members.len());
        for (name, member) in members {
            let Value::Object(fields) = member else {
                return Err(unsupported(format!(
                    "member {name:?} of a keyed map is {}, not an object",
                    kind_of(member)
                )));
            };
            if fields.contains_key(key) {
                return Err(unsupported(format!(
                    "member {name:?} already has a field {key:?}, the identity column"
                )));
            }
            let mut row = Map::with_capacity(fields.len() + 1);
            row.insert(key.to_owned(), Value::String(name.clone()));
            row.extend(fields.iter().map(|(k, v)| (k.clone(), v.clone())));
            rows.push(row);
        }
        KeyedSet::from_rows("", key, rows)
    }

    /// The set as a JSON value: `{name: [rows]}`, or the array of rows when it has no name.
    /// Every row has every field (`null` where a row had none).
    pub fn to_value(&self) -> Value {
        let rows: Vec<Value> = self
            .rows
            .iter()
            .map(|row| {
                Value::Object(
                    self.fields
                        .iter()
                        .map(|f| (f.clone(), row.get(f).cloned().unwrap_or(Value::Null)))
                        .collect(),
                )
            })
            .collect();
        if self.name.is_empty() {
            Value::Array(rows)
        } else {
            let mut object = Map::new();
            object.insert(self.name.clone(), Value::Array(rows));
            Value::Object(object)
        }
    }

    /// The section name of the full payload.
    fn section_name(&self) -> &str {
        if self.name.is_empty() {
            DEFAULT_NAME
        } else {
            &self.name
        }
    }

    /// Checks what every operation needs: `key` among the fields, fields distinct, rows of
    /// scalars with no undeclared field, every identity present and distinct.
    pub(crate) fn validate(&self) -> Result<()> {
        if !self.fields.contains(&self.key) {
            return Err(unsupported(format!(
                "the identity column {:?} is not one of the fields",
                self.key
            )));
        }
        for (i, f) in self.fields.iter().enumerate() {
            if self.fields[..i].contains(f) {
                return Err(unsupported(format!("field {f:?} is declared twice")));
            }
        }
        let mut ids = std::collections::HashSet::with_capacity(self.rows.len());
        for (i, row) in self.rows.iter().enumerate() {
            for (name, value) in row {
                if !self.fields.contains(name) {
                    return Err(unsupported(format!(
                        "row {i} has the undeclared field {name:?}"
                    )));
                }
                if matches!(value, Value::Array(_) | Value::Object(_)) {
                    return Err(unsupported(format!(
                        "row {i}, field {name:?}: a keyed set's values are scalars, not {}",
                        kind_of(value)
                    )));
                }
            }
            let id = row.get(&self.key).unwrap_or(&Value::Null);
            if id.is_null() {
                return Err(unsupported(format!(
                    "row {i} has no identity (column {:?})",
                    self.key
                )));
            }
            if !ids.insert(pack_root::canonical_cell(id)?) {
                return Err(unsupported(format!(
                    "the identity {id} appears in two rows (spec §10a.1: identities are unique)"
                )));
            }
        }
        Ok(())
    }

    /// The canonical bytes of the set's pack root (spec §10a.3): one record per row,
    /// `R⇥field⇥value…␊`, fields in byte order, values canonical (`-`, `true`, canonical
    /// numbers, strings always quoted), records sorted by byte order.
    ///
    /// ```
    /// use agentwire_gcf::KeyedSet;
    /// use serde_json::json;
    ///
    /// let set = KeyedSet::from_value(&json!([{"id": 1, "name": "a\tb"}]), "id")?;
    /// assert_eq!(set.pack_root_bytes()?, b"R\tid\t1\tname\t\"a\\tb\"\n");
    /// # Ok::<(), agentwire_gcf::Error>(())
    /// ```
    pub fn pack_root_bytes(&self) -> Result<Vec<u8>> {
        self.validate()?;
        pack_root::canonical_bytes(self)
    }

    /// The set's pack root, `sha256:<64 hex>` of [`KeyedSet::pack_root_bytes`]: the same for
    /// any order of the rows (and of the fields).
    pub fn pack_root(&self) -> Result<String> {
        Ok(crate::root::root_of(&self.pack_root_bytes()?))
    }

    /// The delta-participating full payload (spec §10a.1): the header with `pack_root=` and
    /// `key=` (and `tool=` when given), then `## name [N]{@key,...}` and one row per member,
    /// in the set's order.
    ///
    /// Fails with `unsupported_value` for a set [`KeyedSet::from_rows`] would refuse, a name
    /// or tool the header cannot carry, and `out_of_range` for an integer outside the
    /// signed 64-bit domain.
    pub fn encode(&self, tool: Option<&str>) -> Result<String> {
        let root = self.pack_root()?;
        let mut out = String::with_capacity(128 + 32 * self.rows.len() * self.fields.len());
        out.push_str("GCF profile=generic");
        if let Some(tool) = tool {
            header::write_field(&mut out, "tool", tool)?;
        }
        header::write_field(&mut out, "pack_root", &root)?;
        header::write_field(&mut out, "key", &self.key)?;
        out.push_str("\n## ");
        lex::write_key(&mut out, self.section_name());
        out.push(' ');
        write_table(&mut out, &self.key, &self.fields, &self.rows)?;
        Ok(out)
    }

    /// Reads a delta-participating full payload (spec §10a.1) with the default
    /// [`DecoderOptions`], checking its `pack_root` (`root_mismatch` when the rows do not
    /// hash to it). The payload is any generic payload that holds a keyed set (see
    /// [`KeyedSet::from_value`]), its identity column named by `key=` in the header.
    pub fn decode(text: &str) -> Result<KeyedSet> {
        DecoderOptions::new().decode_keyed_set(text)
    }
}

impl DecoderOptions {
    /// [`KeyedSet::decode`] with these options' limits (always by the current spec: keyed
    /// sets are v3.3). The payload is one keyed table, `## name [N]{@key,...}` (or a keyed
    /// map `## name [N:]{@key,...}`, or either at the root), whose rows are scalars; a table
    /// of another form is `invalid_line`, an identity column that is not the header's `key=`
    /// `invalid_key`.
    pub fn decode_keyed_set(&self, text: &str) -> Result<KeyedSet> {
        let limits = &self.limits;
        let mut lines = lex::Lines::new(text, limits.max_line_length);
        let head = header::read_header(&mut lines)?;
        if head.profile != header::Profile::Generic {
            return Err(head.line.error(
                ErrorKind::ProfileMismatch,
                "this is a graph payload; read a graph with `decode_graph`",
            ));
        }
        for flag in ["delta", "unchanged"] {
            if head.get(flag) == Some("true") {
                return Err(head.error_at(
                    flag,
                    ErrorKind::ProfileMismatch,
                    format!("a {flag}=true payload is not a full set: read it with `GenericPayload::decode`"),
                ));
            }
        }
        let key = head.get("key").ok_or_else(|| {
            head.line.error(
                ErrorKind::MalformedHeaderField,
                "a keyed set's full payload declares its identity column with key= (spec \
                 §10a.1)",
            )
        })?;
        let Some(line) = lines.next()? else {
            return Err(Error::at_line(
                ErrorKind::InvalidLine,
                lines.end_line(),
                1,
                "a keyed set's full payload holds one table `## name [N]{@key,...}`",
            ));
        };
        let not_a_table = |at: &str| {
            line.error_at(
                ErrorKind::InvalidLine,
                at,
                "a keyed set's full payload holds one table `## name [N]{@key,...}`",
            )
        };
        let rest = line
            .text
            .strip_prefix("## ")
            .filter(|_| line.indent == 0)
            .ok_or_else(|| not_a_table(line.text))?;
        let (name, bracket) = if rest.starts_with('[') {
            (std::borrow::Cow::Borrowed(""), rest)
        } else {
            let (name, after) = lex::key(&line, rest, b" ")?;
            let bracket = after
                .strip_prefix(' ')
                .filter(|b| b.starts_with('['))
                .ok_or_else(|| not_a_table(after))?;
            (name, bracket)
        };
        let (count, _keyed, decl) = lex::table_count(&line, bracket, true)?;
        if !decl.starts_with('{') {
            return Err(not_a_table(decl));
        }
        let fields = delta::keyed_columns(
            &line,
            count,
            bracket,
            decl,
            key,
            ErrorKind::InvalidKey,
            limits,
        )?;
        let rows = delta::keyed_rows(&mut lines, &line, count, bracket, &name, &fields, limits)?;
        if let Some(line) = lines.next()? {
            if !header::is_metadata(&line) {
                return Err(line.error(
                    ErrorKind::InvalidLine,
                    "a keyed set's full payload holds one table",
                ));
            }
            header::parse_summary(line)?;
        }
        // Identities present and unique (spec §10a.1).
        let mut seen = std::collections::HashSet::with_capacity(rows.len());
        let mut set_rows = Vec::with_capacity(rows.len());
        for (row_line, values) in rows {
            let row: Map<String, Value> = values.into_iter().collect();
            let id = row.get(key).unwrap_or(&Value::Null);
            if id.is_null() {
                return Err(row_line.error(ErrorKind::InvalidKey, "a row without its identity"));
            }
            if !seen.insert(pack_root::canonical_cell(id)?) {
                return Err(row_line.error(
                    ErrorKind::DuplicateKey,
                    format!("the identity {id} appears in two rows (spec §10a.1)"),
                ));
            }
            set_rows.push(row);
        }
        let set = KeyedSet {
            name: name.into_owned(),
            key: key.to_owned(),
            fields,
            rows: set_rows,
        };
        if let Some(root) = head.get("pack_root") {
            let actual = set.pack_root()?;
            if actual != root {
                return Err(head.error_at(
                    "pack_root",
                    ErrorKind::RootMismatch,
                    format!("the rows hash to {actual}, the header declares pack_root={root}"),
                ));
            }
        }
        Ok(set)
    }
}

/// Writes `[N]{@key,...}` and the rows of a keyed table (every cell a scalar; a field a row
/// lacks as `-`).
fn write_table(
    out: &mut String,
    key: &str,
    fields: &[String],
    rows: &[Map<String, Value>],
) -> Result<()> {
    out.push('[');
    out.push_str(itoa::Buffer::new().format(rows.len()));
    out.push_str("]{");
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        if f == key {
            out.push('@');
        }
        lex::write_key(out, f);
    }
    out.push_str("}\n");
    for row in rows {
        for (i, f) in fields.iter().enumerate() {
            if i > 0 {
                out.push('|');
            }
            write_cell(out, row.get(f).unwrap_or(&Value::Null))?;
        }
        out.push('\n');
    }
    Ok(())
}

/// Writes a scalar cell in the current spec's form.
fn write_cell(out: &mut String, value: &Value) -> Result<()> {
    match value {
        Value::Null => out.push('-'),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => pack_root::write_number(out, n)?,
        Value::String(s) => lex::write_str(out, s),
        other => {
            return Err(unsupported(format!(
                "a keyed set's values are scalars, not {}",
                kind_of(other)
            )))
        }
    }
    Ok(())
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cold]
fn unsupported(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::UnsupportedValue, message)
}
