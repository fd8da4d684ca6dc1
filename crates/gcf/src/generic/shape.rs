//! The layouts of a table that later versions of the spec added to v3.1's plain field list,
//! read from its header once and applied to every row:
//!
//! - flattened path columns `"customer>name"` (v3.2, §7.4.6): the cells of one nested object
//!   spread over columns, rebuilt into `{"customer": {"name": …}}` at the place of the first
//!   of them; all leaves `~` leave the object out, all leaves `-` make it `null`;
//! - keyed maps `## name [N:]{key,…}` (v3.5, §7.2a): cell 0 of each row is a member key, the
//!   other cells the member's object, and the table an object;
//! - the identity column `@id` (v3.3, §10a.1), valid with `key=` in the header, in a grouped
//!   table, or as a keyed map's key column;
//! - constant columns `name=value` (v3.6): a member every row has with the same value, given
//!   once in the header and absent from the rows;
//! - value-grouping `… group=kind` (v3.6): rows clustered under sub-headers `kind=value [n]`,
//!   the group column's value coming from the sub-header.
//!
//! A table whose header has none of these has no [`Shape`] and is read as in v3.1, so the
//! plain tables keep their fast paths.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::Value;

use crate::error::{Error, ErrorKind, Result};
use crate::lex::{self, DeclExtra, Line, Scalar};

/// How the members of a row's object come from its cells (and the header).
#[derive(Debug)]
pub(crate) struct Shape<'de> {
    /// `[N:]`: cell 0 is each row's member key, and the table an object.
    pub(crate) keyed: bool,
    /// The members of each row's object, in order.
    pub(crate) members: Members<'de>,
    /// The value-grouping column (`group=`), if any; its member is [`Member::Group`].
    pub(crate) group: Option<Cow<'de, str>>,
    /// For each cell: whether it only holds a scalar (no attachment marker): flattened leaves,
    /// a keyed map's key column, every cell of a grouped table.
    pub(crate) scalar_only: Vec<bool>,
    /// The cell of the identity column `@name`, whose values are unique (spec §10a.1).
    pub(crate) identity: Option<usize>,
    /// How many objects deep below the row's own the flattened columns build (the longest
    /// path's segments less one): they count against the depth limit with the row.
    pub(crate) nesting: usize,
}

/// The members of one object: their names (for the object's keys) and where their values
/// come from.
#[derive(Debug, Default)]
pub(crate) struct Members<'de> {
    pub(crate) names: Vec<Cow<'de, str>>,
    pub(crate) sources: Vec<Member<'de>>,
}

/// Where one member's value comes from.
#[derive(Debug)]
pub(crate) enum Member<'de> {
    /// A cell of the row (its index among the row's cells).
    Cell(usize),
    /// A constant column: its token in the header the shape was read from, where that token
    /// is in the field declaration (from its `{`: a shape serves every header with the same
    /// declaration, see [`Member::const_token`]), and the value it makes.
    Const {
        line: Line<'de>,
        token: &'de str,
        offset: usize,
        value: Value,
    },
    /// The value-grouping column: the value of the row's group sub-header.
    Group,
    /// A flattened object: its members, and every cell beneath it.
    Nested(Box<Nested<'de>>),
}

/// An object spread over path columns.
#[derive(Debug)]
pub(crate) struct Nested<'de> {
    pub(crate) members: Members<'de>,
    /// The cells of every leaf beneath this object, for the all-`~` and all-`-` rules.
    pub(crate) leaves: Vec<usize>,
}

/// What a row's cell holds, for the rules on flattened objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Leaf {
    Absent,
    Null,
    Value,
}

impl Nested<'_> {
    /// What the object is in a row whose cell `c` holds `leaf(c)`: absent when every leaf is
    /// (`~`); `null` at the top level when every leaf is `-`; an object otherwise.
    pub(crate) fn state(&self, top: bool, leaf: impl Fn(usize) -> Leaf) -> Leaf {
        let (mut absent, mut null) = (true, true);
        for &c in &self.leaves {
            match leaf(c) {
                Leaf::Absent => null = false,
                Leaf::Null => absent = false,
                Leaf::Value => return Leaf::Value,
            }
        }
        // Absent and null leaves mixed: an object of the nulls.
        if absent {
            Leaf::Absent
        } else if top && null {
            Leaf::Null
        } else {
            Leaf::Value
        }
    }
}

/// A table header's declaration as the current spec reads it.
pub(crate) struct Declared<'a, 'de> {
    pub(crate) line: &'a Line<'de>,
    /// The field declaration's text, from its `{`.
    pub(crate) decl: &'de str,
    /// Every declared name, in order (constants and the group column included).
    pub(crate) names: Vec<Cow<'de, str>>,
    pub(crate) extras: &'a [DeclExtra<'de>],
    pub(crate) keyed: bool,
    /// The `group=` column, with its text for positions.
    pub(crate) group: Option<(Cow<'de, str>, &'de str)>,
    /// The header's `key=`, naming the identity column of a delta-participating payload.
    pub(crate) identity: Option<&'de str>,
    /// Whether path columns are read as flattened objects (always, in the current spec).
    pub(crate) flatten: bool,
}

/// Whether `name` is a flattened path (spec §7.4.6.2): it contains `>` and no segment is
/// empty.
pub(crate) fn is_path(name: &str) -> bool {
    name.contains('>') && name.split('>').all(|s| !s.is_empty())
}

impl<'de> Member<'de> {
    /// A constant's token and line, for a table whose header is `line` with its count
    /// bracket at `at`: in that header when it holds the declaration (the shape may have
    /// been read from an earlier header with the same one), else (a shared schema's
    /// `.field [N]`) in the header that declared it.
    pub(crate) fn const_token(&self, line: &Line<'de>, at: &'de str) -> (Line<'de>, &'de str) {
        let Member::Const {
            line: first,
            token,
            offset,
            ..
        } = self
        else {
            return (*line, "");
        };
        let here = at
            .find('{')
            .and_then(|i| at.get(i + offset..i + offset + token.len()))
            .filter(|t| t == token);
        match here {
            Some(t) => (*line, t),
            None => (*first, token),
        }
    }
}

impl<'de> Shape<'de> {
    /// The shape of a declaration, and the names of the cells each row has (the declared
    /// names without constants and the group column). `constant` makes a constant's value
    /// (reporting a bad token).
    pub(crate) fn new(
        declared: Declared<'_, 'de>,
        constant: impl Fn(&Line<'de>, &'de str) -> Result<Value>,
    ) -> Result<(Vec<Cow<'de, str>>, Shape<'de>)> {
        let Declared {
            line,
            decl,
            names,
            extras,
            keyed,
            group,
            identity,
            flatten,
        } = declared;
        let extra = |i: usize| extras.iter().find(|e| e.index == i);
        if keyed && names.len() < 2 {
            return Err(line.error(
                ErrorKind::InvalidKeyedMap,
                "a keyed map `[N:]` declares at least two fields (the key column and a value \
                 field)",
            ));
        }
        // The identity column: at most one, and only where the spec gives it a meaning.
        let identities: Vec<usize> = extras
            .iter()
            .filter(|e| e.identity)
            .map(|e| e.index)
            .collect();
        if identities.len() > 1 {
            return Err(line.error(
                ErrorKind::InvalidKey,
                "a field declaration marks at most one identity column `@name`",
            ));
        }
        if let Some(&i) = identities.first() {
            let allowed =
                group.is_some() || (keyed && i == 0) || identity.is_some_and(|k| k == names[i]);
            if !allowed {
                return Err(line.error(
                    ErrorKind::InvalidKey,
                    format!(
                        "the identity column @{:?} needs `key={}` in the header (a delta \
                         payload, spec §10a.1) or a `group=` clause",
                        names[i], names[i]
                    ),
                ));
            }
        }
        let mut group_at = None;
        if let Some((name, text)) = &group {
            if keyed {
                return Err(line.error_at(
                    ErrorKind::InvalidGroupHeader,
                    text,
                    "a keyed map cannot be value-grouped",
                ));
            }
            let Some(i) = names.iter().position(|n| n == name) else {
                return Err(line.error_at(
                    ErrorKind::InvalidGroupHeader,
                    text,
                    format!("the group column {name:?} is not a declared field"),
                ));
            };
            match extra(i) {
                Some(e) if e.identity => {
                    return Err(line.error_at(
                        ErrorKind::InvalidGroupHeader,
                        text,
                        format!("the group column {name:?} is the identity column"),
                    ))
                }
                Some(e) if e.value.is_some() => {
                    return Err(line.error_at(
                        ErrorKind::InvalidGroupHeader,
                        text,
                        format!("the group column {name:?} is a constant column"),
                    ))
                }
                _ => {}
            }
            if identities.is_empty() {
                return Err(line.error_at(
                    ErrorKind::InvalidGroupHeader,
                    text,
                    "a grouped table marks exactly one identity column `@name`",
                ));
            }
            group_at = Some(i);
        }
        // The cells, and the members in declaration order.
        let mut cells: Vec<Cow<'de, str>> = Vec::with_capacity(names.len());
        let mut identity_cell = None;
        let mut builder = Builder::default();
        let mut nesting = 0;
        for (i, name) in names.iter().enumerate() {
            if Some(i) == group_at {
                builder.top(line, name.clone(), Member::Group)?;
                continue;
            }
            if let Some(token) = extra(i).and_then(|e| e.value) {
                if keyed && i == 0 {
                    return Err(line.error_at(
                        ErrorKind::InvalidConstValue,
                        token,
                        "a keyed map's key column cannot be a constant column",
                    ));
                }
                let value = constant_value(line, token, &constant)?;
                builder.top(
                    line,
                    name.clone(),
                    Member::Const {
                        line: *line,
                        token,
                        offset: lex::offset_in(decl, token),
                        value,
                    },
                )?;
                continue;
            }
            let cell = cells.len();
            cells.push(name.clone());
            // (A keyed map's member keys are unique as keys.)
            if extra(i).is_some_and(|e| e.identity) && !(keyed && i == 0) {
                identity_cell = Some(cell);
            }
            if keyed && i == 0 {
                // The key column: its label is not a member.
                continue;
            }
            if flatten && is_path(name) {
                nesting = nesting.max(name.split('>').count() - 1);
                builder.path(line, name, cell)?;
            } else {
                builder.top(line, name.clone(), Member::Cell(cell))?;
            }
        }
        let per_row = cells.len() - usize::from(keyed);
        if per_row == 0 && !keyed {
            return Err(line.error(
                ErrorKind::NoBareColumn,
                "every field is a constant column: a row must carry at least one field",
            ));
        }
        let mut scalar_only = vec![group.is_some(); cells.len()];
        if keyed {
            scalar_only[0] = true;
        }
        for source in &builder.members.sources {
            if let Member::Nested(nested) = source {
                for &c in &nested.leaves {
                    scalar_only[c] = true;
                }
            }
        }
        let shape = Shape {
            keyed,
            members: builder.members,
            group: group.map(|(name, _)| name),
            scalar_only,
            identity: identity_cell,
            nesting,
        };
        Ok((cells, shape))
    }
}

/// Checks a constant column's value or a group sub-header's (spec v3.6): a scalar, never
/// `~`, an attachment marker or an empty token (the empty string is always quoted).
pub(crate) fn check_constant(line: &Line<'_>, token: &str) -> Result<()> {
    let invalid = |what: &str| {
        Err(line.error_at(
            ErrorKind::InvalidConstValue,
            token,
            format!("a constant column's value is a scalar, not {what}"),
        ))
    };
    if token.is_empty() {
        return invalid("an empty token (the empty string is written \"\")");
    }
    match lex::scalar(line, token)? {
        Scalar::Missing => invalid("`~` (absent)"),
        Scalar::Marker | Scalar::InlineMarker(_) => invalid("an attachment marker"),
        _ => Ok(()),
    }
}

/// A constant column's value, checked, made by `make`.
fn constant_value<'de>(
    line: &Line<'de>,
    token: &'de str,
    make: impl Fn(&Line<'de>, &'de str) -> Result<Value>,
) -> Result<Value> {
    check_constant(line, token)?;
    make(line, token)
}

/// Builds the member tree of a declaration, checking that no two fields define one member.
#[derive(Default)]
struct Builder<'de> {
    members: Members<'de>,
    /// The index of each top-level member by name, once there are more than
    /// [`Builder::SCANNED`] (fewer are found by comparing each name: no hashing, no table
    /// allocated for the short declarations of most headers).
    index: HashMap<Cow<'de, str>, usize>,
}

impl<'de> Builder<'de> {
    /// The most top-level members looked up by a scan.
    const SCANNED: usize = 16;

    /// The index of the top-level member `name`.
    fn find(&self, name: &str) -> Option<usize> {
        if self.members.names.len() <= Self::SCANNED {
            self.members.names.iter().position(|n| n == name)
        } else {
            self.index.get(name).copied()
        }
    }

    /// A top-level member.
    fn top(&mut self, line: &Line<'de>, name: Cow<'de, str>, source: Member<'de>) -> Result<()> {
        if self.find(&name).is_some() {
            return Err(conflict(line, &name));
        }
        let at = self.members.names.len();
        if at == Self::SCANNED {
            self.index = (self.members.names.iter().cloned()).zip(0..).collect();
        }
        if at >= Self::SCANNED {
            self.index.insert(name.clone(), at);
        }
        self.members.names.push(name);
        self.members.sources.push(source);
        Ok(())
    }

    /// A leaf of a flattened path, in cell `cell` (the name a `Cow` to borrow its segments).
    #[allow(clippy::ptr_arg)]
    fn path(&mut self, line: &Line<'de>, name: &Cow<'de, str>, cell: usize) -> Result<()> {
        let segments: Vec<&str> = name.split('>').collect();
        let (last, parents) = segments.split_last().unwrap_or((&"", &[]));
        let top = owned_segment(name, segments[0]);
        let at = match self.find(&top) {
            Some(at) => at,
            None => {
                self.top(
                    line,
                    top.clone(),
                    Member::Nested(Box::new(Nested {
                        members: Members::default(),
                        leaves: Vec::new(),
                    })),
                )?;
                self.members.names.len() - 1
            }
        };
        let Member::Nested(nested) = &mut self.members.sources[at] else {
            return Err(conflict(line, name));
        };
        nested.leaves.push(cell);
        let mut members = &mut nested.members;
        for segment in &parents[1..] {
            let segment = owned_segment(name, segment);
            let at = match members.names.iter().position(|n| *n == segment) {
                Some(at) => at,
                None => {
                    members.names.push(segment);
                    members.sources.push(Member::Nested(Box::new(Nested {
                        members: Members::default(),
                        leaves: Vec::new(),
                    })));
                    members.names.len() - 1
                }
            };
            let Member::Nested(inner) = &mut members.sources[at] else {
                return Err(conflict(line, name));
            };
            inner.leaves.push(cell);
            members = &mut inner.members;
        }
        let last = owned_segment(name, last);
        if members.names.contains(&last) {
            return Err(conflict(line, name));
        }
        members.names.push(last);
        members.sources.push(Member::Cell(cell));
        Ok(())
    }
}

/// A segment of a path name, borrowed when the name is.
fn owned_segment<'de>(name: &Cow<'de, str>, segment: &str) -> Cow<'de, str> {
    match name {
        Cow::Borrowed(whole) => {
            let start = lex::offset_in(whole, segment);
            Cow::Borrowed(&whole[start..start + segment.len()])
        }
        Cow::Owned(_) => Cow::Owned(segment.to_owned()),
    }
}

#[cold]
fn conflict(line: &Line<'_>, name: &str) -> Error {
    line.error(
        ErrorKind::DuplicateFieldName,
        format!("field {name:?} defines a member another field of the declaration defines"),
    )
}
