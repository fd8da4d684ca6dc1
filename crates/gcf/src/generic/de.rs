//! The generic-profile decoder: a serde `Deserializer` that drives the target's visitors
//! straight from the input lines (no intermediate tree), borrowing strings where it can.
//!
//! Structure is recognised line by line with the indentation rules of spec §4.1 as the v3.1
//! reference encoder applies them: an object's members one level below its `## key` line;
//! a named array's rows or items at the level of its header; an expanded item's content one
//! level below it; a tabular row's attachments (`.field` lines and positional inline bodies)
//! at the row's level or one below, with traditional bodies two levels below the row.
//!
//! Every declared count is checked against the items found; deferred `[?]` counts against the
//! `##! summary` trailer at the end. Depth, element, field and line-length limits are enforced
//! as the input is read, and no allocation is sized by a declared count.
//!
//! `from_str::<Value>` builds the value itself ([`Parser::build`]): the lines seen most (plain
//! `key=value`, `key[N]: a,b`, `## key`, `## key [N]{a,b}` and plain table rows) are read by
//! fast paths that consume nothing when a line is anything else, and the general reading
//! (which reports every error) takes it. The two give the same value or the same error; the
//! testkit oracle checks it on every fixture, property-test case and fuzz input. The builder
//! also reads a row's `.field` bodies as they come, once; where that fails, the row's
//! attachments are read again the serde path's way (see [`RowSeq::read_row`]).

use std::borrow::Cow;
use std::cell::Cell as Shared;
use std::collections::{BTreeSet, HashSet};
use std::rc::Rc;

use std::marker::PhantomData;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess as _, Visitor};
use serde::forward_to_deserialize_any;

use serde_json::map::Entry;
use serde_json::{Map, Value};

use super::arbitrary_precision;
use super::build::{self, Build};
use super::shape::{self, Declared, Leaf, Member, Members, Shape};
use crate::error::{Error, ErrorKind, Limit, Position, Result};
use crate::header::{self, Profile};
use crate::lex::{self, Count, Cursor, Line, Lines, Scalar};
use crate::number::{self, Integer, Number};
use crate::options::{DecoderOptions, Limits, Spec};

mod unit;

pub(crate) use unit::{UnitParser, UnitRoot};

/// Reads past a value, validating it.
const SKIP: PhantomData<IgnoredAny> = PhantomData;

/// The field names of a tabular array or an inline object schema.
type Fields<'de> = Rc<Vec<Cow<'de, str>>>;

/// A table's layout beyond its field names, when its header has one (see [`Shape`]).
type Layout<'de> = Option<Rc<Shape<'de>>>;

/// Decodes a whole generic-profile payload.
pub(crate) fn decode<'de, T: de::Deserialize<'de>>(
    input: &'de str,
    opts: &DecoderOptions,
) -> Result<T> {
    decode_counted(input, opts, &mut Vec::new())
}

/// Decodes a whole generic-profile payload into a `serde_json::Value`: what [`decode`]
/// gives for one, with objects of member lines read here directly (see [`Parser::build`]).
pub(crate) fn decode_value(input: &str, opts: &DecoderOptions) -> Result<Value> {
    decode_value_counted(input, opts, &mut Vec::new())
}

/// [`decode`], also handing out the item counts of the payload's deferred `[?]` sections in
/// document order, at their positions (the row reader checks those of a row's sections
/// against the trailer, which its one-row payloads do not carry).
pub(crate) fn decode_counted<'de, T: de::Deserialize<'de>>(
    input: &'de str,
    opts: &DecoderOptions,
    deferred: &mut Vec<(Position, u64)>,
) -> Result<T> {
    decode_with(input, opts, deferred, |p, pending| {
        PhantomData::<T>.deserialize(ValueDe { p, pending })
    })
}

/// [`decode_value`] handing out the deferred counts as [`decode_counted`] does.
pub(crate) fn decode_value_counted(
    input: &str,
    opts: &DecoderOptions,
    deferred: &mut Vec<(Position, u64)>,
) -> Result<Value> {
    decode_with(input, opts, deferred, |p, pending| p.build(pending))
}

/// Reads the header and the root, hands the root's pending value to `read`, and checks what
/// follows it; the deferred sections' counts go to `deferred`.
fn decode_with<'de, R>(
    input: &'de str,
    opts: &DecoderOptions,
    deferred: &mut Vec<(Position, u64)>,
    read: impl FnOnce(&mut Parser<'de>, Pending<'de>) -> Result<R>,
) -> Result<R> {
    let (mut p, header) = start(input, opts)?;
    let (pending, root) = p.root(header)?;
    let value = read(&mut p, pending)?;
    p.finish(root)?;
    *deferred = std::mem::take(&mut p.deferred);
    Ok(value)
}

/// Where a table read in pieces resumes (see [`decode_unit`]): the rows earlier pieces held,
/// and whether more rows follow this piece (then its end is not checked: no count, no
/// trailer entry, unless the declared count is reached in it).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Resume {
    pub(crate) found: u64,
    pub(crate) partial: bool,
}

/// What a unit of a payload read a unit at a time (`units.rs`) carries between units.
#[derive(Debug, Default)]
pub(crate) struct Carry {
    /// The root object's members decoded so far (a repeated key and the element limit are
    /// checked against them).
    pub(crate) members: Map<String, Value>,
    /// The deferred `[?]` sections found so far, at their positions in the input.
    pub(crate) deferred: Vec<(Position, u64)>,
    /// How many `## key` section lines the unit starts with (after its header line) that
    /// re-enter sections opened in units before, one in the other: their members go on in
    /// the objects already in `members` (the last member at each level).
    pub(crate) reopen: usize,
}

/// Decodes one unit of a payload read a unit at a time: `text` is the payload's header line
/// and a run of the root's lines, read as the whole payload's decoder reads them. A root
/// object's members go into `carry.members`; any other root is returned. The first table
/// the unit opens resumes as `resume` says. `to_input` moves a position in `text` to the
/// input's. With `last`, the unit ends the payload: what follows the root (the trailer) is
/// checked, against every unit's deferred sections.
pub(crate) fn decode_unit(
    text: &str,
    opts: &DecoderOptions,
    carry: &mut Carry,
    resume: Option<Resume>,
    to_input: &dyn Fn(Position) -> Position,
    last: bool,
) -> Result<Option<Value>> {
    let (mut p, header) = start(text, opts)?;
    p.resume = resume;
    p.reopen = carry.reopen;
    p.reopened = carry.reopen;
    let (pending, root) = p.root(header)?;
    let value = match pending {
        Pending::Object { line, level: 0 } => {
            p.enter(&line)?;
            p.build_members(0, &mut carry.members)
                .map_err(|e| e.or_position(|| line_position(&line)))?;
            p.leave();
            None
        }
        pending => Some(p.build(pending)?),
    };
    let found = std::mem::take(&mut p.deferred);
    carry
        .deferred
        .extend(found.into_iter().map(|(at, n)| (to_input(at), n)));
    // A unit ends where the root's reading stops. Anything after that point in a unit (a
    // metadata line where a member was expected, say) ends the payload for the whole decoder
    // too: it is checked here as at the end, never skipped.
    if last || p.lines.has_next()? {
        p.deferred = std::mem::take(&mut carry.deferred);
        p.finish(root)?;
    }
    Ok(value)
}

/// When the line of `text` after its first (a root member or a root array's line) opens a
/// table whose rows stand alone (no layout, or one of flattened and constant columns), whose
/// pieces [`decode_unit`] can read with a [`Resume`]: the member's key (`None` for a root
/// table) and the declared count (`None` for `[?]`).
#[allow(clippy::type_complexity)]
pub(crate) fn opens_plain_table(
    text: &str,
    opts: &DecoderOptions,
) -> Option<(Option<String>, Option<u64>)> {
    opens_piecewise(text, opts, false)
}

/// When the line of `text` after its first opens a list of `@N` items (the root, or a root
/// member), whose pieces [`decode_unit`] can read with a [`Resume`] (cut before an item): the
/// member's key (`None` for the root list) and the declared count (`None` for `[?]`).
#[allow(clippy::type_complexity)]
pub(crate) fn opens_item_list(
    text: &str,
    opts: &DecoderOptions,
) -> Option<(Option<String>, Option<u64>)> {
    opens_piecewise(text, opts, true)
}

/// [`opens_plain_table`], or with `list` [`opens_item_list`].
#[allow(clippy::type_complexity)]
fn opens_piecewise(
    text: &str,
    opts: &DecoderOptions,
    list: bool,
) -> Option<(Option<String>, Option<u64>)> {
    let mut p = Parser::new(text, opts);
    p.lines.next_raw().ok()??;
    let line = p.lines.next().ok()??;
    if line.indent != 0 {
        return None;
    }
    let (key, pending) = match line.text.strip_prefix("## ").filter(|s| s.starts_with('[')) {
        Some(bracket) => (None, p.array_header(line, bracket, 0, None).ok()?),
        None => {
            let mut out = None;
            let key = p.member(line, 0, &mut out).ok()?;
            (Some(key.into_owned()), out?)
        }
    };
    let count = match pending {
        Pending::Array {
            count,
            body: Body::Rows { shape, .. },
            ..
        } if !list && shape.as_deref().is_none_or(rows_stand_alone) => count,
        Pending::Array {
            count,
            body: Body::Items { level: 0 },
            ..
        } if list => count,
        _ => return None,
    };
    Some((
        key,
        match count {
            Count::Known(n) => Some(n),
            Count::Deferred => None,
        },
    ))
}

/// Whether a table of layout `shape` reads each row on its own, so that it may be read in
/// pieces: flattened and constant columns only (a keyed map's keys, an identity column's values
/// and value groups are checked across rows).
fn rows_stand_alone(shape: &Shape<'_>) -> bool {
    !shape.keyed && shape.group.is_none() && shape.identity.is_none()
}

/// A parser over `input` with its header line read and checked.
fn start<'de>(input: &'de str, opts: &DecoderOptions) -> Result<(Parser<'de>, Line<'de>)> {
    let mut p = Parser::new(input, opts);
    let header = header::read_header(&mut p.lines)?;
    p.identity = check_header(&header, p.spec)?;
    Ok((p, header.line))
}

/// The checks of a generic payload's header line that come before its body (the profile,
/// `tokens=`, and in the current spec no generic delta or `unchanged` reply, spec §10a):
/// shared with [`RowReader`](crate::RowReader), so that both report the same first error.
/// Returns the identity column (`key=`) the header declares.
pub(crate) fn check_header<'h>(header: &header::Header<'h>, spec: Spec) -> Result<Option<&'h str>> {
    if header.profile != Profile::Generic {
        return Err(header.line.error(
            ErrorKind::ProfileMismatch,
            format!(
                "this is a {} payload; the generic decoder reads profile=generic",
                header.profile
            ),
        ));
    }
    if let Some(tokens) = header.get("tokens") {
        if !tokens.bytes().all(|b| b.is_ascii_digit()) {
            return Err(header.error_at(
                "tokens",
                ErrorKind::MalformedHeaderField,
                format!("tokens={tokens} is not a non-negative integer"),
            ));
        }
    }
    if spec.current() {
        // A generic delta or an `unchanged` reply (spec §10a) stands for a change to a set,
        // not a value.
        for (key, what) in [
            ("delta", "a generic delta"),
            ("unchanged", "an unchanged=true reply"),
        ] {
            if header.get(key) == Some("true") {
                return Err(header.error_at(
                    key,
                    ErrorKind::ProfileMismatch,
                    format!(
                        "this is {what} (spec §10a), not a value: read it with \
                         `GenericDelta::decode` or `GenericPayload::decode`"
                    ),
                ));
            }
        }
        return Ok(header.get("key"));
    }
    Ok(None)
}

/// What the root value is, for the checks after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Root {
    Object,
    Scalar,
    Array(Count),
}

struct Parser<'de> {
    lines: Lines<'de>,
    limits: Limits,
    require_trailer: bool,
    /// The version the payload is read by.
    spec: Spec,
    /// The header's `key=` (the identity column of a delta-participating payload).
    identity: Option<&'de str>,
    depth: usize,
    /// Deferred `[?]` sections: where their count bracket is, and the items found.
    deferred: Vec<(Position, u64)>,
    /// Row buffers of finished tables, reused by the next (nested tables come row after row).
    spare_rows: Vec<(Vec<Cell<'de>>, Vec<Option<Child<'de>>>)>,
    /// Field lists of finished tables, reused by the next (a `Cell`: table headers are read
    /// through `&self`).
    spare_fields: Shared<Vec<Fields<'de>>>,
    /// The layouts of the last eight field declarations that had one (a `Cell` as well).
    shapes: Shared<Vec<CachedShape<'de>>>,
    /// The last eight plain declarations with constant columns read on the plain-table path
    /// (a `Cell` as well).
    const_decls: Shared<Vec<ConstDecl<'de>>>,
    /// The state of a finished shaped table, reused by the next.
    spare_shaped: Option<Box<Shaped<'de>>>,
    /// The objects of plain rows, by their keys (the `Value` builder's).
    templates: build::Templates,
    /// A plain row's values, before they go into its object.
    row_values: Vec<Option<Value>>,
    /// Value buffers of general rows (one per nesting level in use).
    spare_values: Vec<Vec<Option<Value>>>,
    /// Whether the `Value` builder is reading a row's `.field` bodies as they come (an
    /// attempt that starts over without it if anything fails: see [`RowSeq::read_row`]).
    eager_attempt: bool,
    /// Whether that reading is off (while a row whose attempt failed is read again).
    eager_off: bool,
    /// Where the first table read resumes, when the payload is read in pieces.
    resume: Option<Resume>,
    /// The section lines still to re-enter, and how many the unit re-enters ([`Carry`]).
    reopen: usize,
    reopened: usize,
}

/// A plain field declaration with constant columns (`{name,unit=cpu,value}`, spec v3.6), kept
/// for the next header with the same declaration: its `{…}` text, the rows' cells, and the
/// constants.
struct ConstDecl<'de> {
    decl: &'de str,
    fields: Fields<'de>,
    consts: Rc<Consts<'de>>,
}

/// The constant columns of a table read on the plain-table path (a declaration without any
/// other layout: no flattened, key, identity or group column): every declared name, the keys
/// of each row's object, and each constant's index among them with its value. Such a table's
/// rows make what its [`Shape`] of `Member::Cell` and `Member::Const` members makes.
struct Consts<'de> {
    names: Vec<Cow<'de, str>>,
    values: Vec<(usize, Value)>,
}

/// A field declaration's layout, kept for the next header with the same declaration.
struct CachedShape<'de> {
    /// The declaration from its `{`, with any `group=` clause.
    decl: &'de str,
    keyed: bool,
    fields: Fields<'de>,
    shape: Rc<Shape<'de>>,
}

/// The value the deserializer is about to read.
#[derive(Debug, Clone)]
enum Pending<'de> {
    /// A scalar token (trimmed) on `line`.
    Scalar { line: Line<'de>, token: &'de str },
    /// An object whose members are at `level`; `line` opened it.
    Object { line: Line<'de>, level: usize },
    /// An array; `at` is its count bracket on `line`.
    Array {
        line: Line<'de>,
        at: &'de str,
        count: Count,
        body: Body<'de>,
    },
    /// A positional inline object body (spec §7.4.5.1).
    InlineObject {
        line: Line<'de>,
        fields: Fields<'de>,
    },
}

/// The body of an array.
#[derive(Debug, Clone)]
enum Body<'de> {
    /// Comma-separated scalars after `:` (untrimmed).
    Inline(&'de str),
    /// Expanded `@N` items at `level`.
    Items { level: usize },
    /// Tabular rows at `level`: their cells' names, and the table's layout when its header
    /// has one beyond them.
    Rows {
        fields: Fields<'de>,
        level: usize,
        shape: Layout<'de>,
    },
}

#[cold]
fn line_position(line: &Line<'_>) -> Position {
    Position::new(line.number, line.indent + 1)
}

impl<'de> Parser<'de> {
    fn new(input: &'de str, opts: &DecoderOptions) -> Self {
        Parser {
            lines: Lines::new(input, opts.limits.max_line_length),
            limits: opts.limits,
            require_trailer: opts.require_trailer,
            spec: opts.spec,
            identity: None,
            depth: 0,
            deferred: Vec::new(),
            spare_rows: Vec::new(),
            spare_fields: Shared::new(Vec::new()),
            shapes: Shared::new(Vec::new()),
            const_decls: Shared::new(Vec::new()),
            spare_shaped: None,
            templates: build::Templates::default(),
            row_values: Vec::new(),
            spare_values: Vec::new(),
            eager_attempt: false,
            eager_off: false,
            resume: None,
            reopen: 0,
            reopened: 0,
        }
    }

    #[inline]
    fn enter(&mut self, line: &Line<'_>) -> Result<()> {
        self.depth += 1;
        if self.depth > self.limits.max_depth {
            return Err(over_limit(line, Limit::Depth, self.limits.max_depth));
        }
        Ok(())
    }

    #[inline]
    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Checks the objects a row's flattened columns build below the row (entered): `nesting`
    /// more levels (see [`Shape::nesting`]).
    #[inline]
    fn check_nesting(&self, line: &Line<'_>, nesting: usize) -> Result<()> {
        if self.depth + nesting > self.limits.max_depth {
            return Err(over_limit(line, Limit::Depth, self.limits.max_depth));
        }
        Ok(())
    }

    /// Keeps a finished table's row buffers for the next table.
    fn recycle(&mut self, table: Table<'de>) {
        let Table {
            fields,
            mut cells,
            mut children,
            shaped,
            ..
        } = table;
        if self.spare_rows.len() < 8 {
            cells.clear();
            children.clear();
            self.spare_rows.push((cells, children));
        }
        self.give_fields(fields);
        if let Some(mut shaped) = shaped {
            shaped.group = None;
            shaped.group_left = 0;
            shaped.groups.clear();
            shaped.ids.clear();
            self.spare_shaped = Some(shaped);
        }
    }

    /// Keeps a field list no table holds any more for the next table header.
    fn give_fields(&self, mut fields: Fields<'de>) {
        if let Some(names) = Rc::get_mut(&mut fields) {
            names.clear();
            let mut spare = self.spare_fields.take();
            if spare.len() < 8 {
                spare.push(fields);
            }
            self.spare_fields.set(spare);
        }
    }

    /// The state of a shaped table with layout `shape` (a finished table's, or a new one).
    fn shaped(&mut self, shape: Layout<'de>) -> Option<Box<Shaped<'de>>> {
        let shape = shape?;
        Some(match self.spare_shaped.take() {
            Some(mut shaped) => {
                shaped.shape = shape;
                shaped.templates = MemberTemplates::default();
                shaped
            }
            None => Box::new(Shaped {
                shape,
                group: None,
                group_left: 0,
                groups: HashSet::new(),
                ids: BTreeSet::new(),
                templates: MemberTemplates::default(),
            }),
        })
    }

    /// An empty field list for a table header: a finished table's, or a new one.
    fn spare_fields(&self) -> Fields<'de> {
        let mut spare = self.spare_fields.take();
        let fields = spare.pop().unwrap_or_default();
        self.spare_fields.set(spare);
        fields
    }

    fn check_count(&self, line: &Line<'_>, at: &str, count: Count) -> Result<()> {
        #[cold]
        #[inline(never)]
        fn too_many(line: &Line<'_>, at: &str, n: u64, max: usize) -> Error {
            line.error_at(
                ErrorKind::LimitExceeded(Limit::Elements),
                at,
                format!("declared count {n} exceeds the limit of {max} elements"),
            )
        }
        if let Count::Known(n) = count {
            if n > self.limits.max_elements as u64 {
                return Err(too_many(line, at, n, self.limits.max_elements));
            }
        }
        Ok(())
    }

    #[inline]
    fn check_elements(&self, line: &Line<'_>, n: u64) -> Result<()> {
        if n > self.limits.max_elements as u64 {
            return Err(over_limit(line, Limit::Elements, self.limits.max_elements));
        }
        Ok(())
    }

    /// Checks an array's item count against its declaration, or records a deferred one.
    fn settle_count(&mut self, line: &Line<'_>, at: &str, count: Count, found: u64) -> Result<()> {
        #[cold]
        #[inline(never)]
        fn mismatch(line: &Line<'_>, at: &str, n: u64, found: u64) -> Error {
            line.error_at(
                ErrorKind::CountMismatch,
                at,
                format!("declared [{n}] but found {found} items"),
            )
        }
        match count {
            Count::Known(n) if n != found => Err(mismatch(line, at, n, found)),
            Count::Known(_) => Ok(()),
            Count::Deferred => {
                self.deferred.push((line.position_of(at), found));
                Ok(())
            }
        }
    }

    /// Reads the count bracket, field declaration or inline values after an array's name,
    /// giving the pending array with its body at `level`.
    fn array_header(
        &self,
        line: Line<'de>,
        s: &'de str,
        level: usize,
        shared: Option<&(Fields<'de>, Layout<'de>)>,
    ) -> Result<Pending<'de>> {
        let current = self.spec.current();
        let (count, keyed, rest) = lex::table_count(&line, s, current)?;
        self.check_count(&line, s, count)?;
        let rest = rest.trim_end_matches([' ', '\t']);
        if keyed {
            if count == Count::Known(0) {
                return Err(zero_keyed_count(&line, s));
            }
            if !rest.starts_with('{') {
                return Err(line.error_at(
                    ErrorKind::InvalidKeyedMap,
                    s,
                    "a keyed map `[N:]` is followed by its field declaration `{key,...}`",
                ));
            }
        }
        let body = if rest.is_empty() {
            match shared {
                Some((fields, shape)) => Body::Rows {
                    fields: Rc::clone(fields),
                    level,
                    shape: shape.clone(),
                },
                None => Body::Items { level },
            }
        } else if rest.starts_with('{') {
            // A declaration with a layout seen before in this document: its shape again.
            if current {
                if let Some((fields, shape)) = self.cached_shape(rest, keyed) {
                    return Ok(Pending::Array {
                        line,
                        at: s,
                        count,
                        body: Body::Rows {
                            fields,
                            level,
                            shape: Some(shape),
                        },
                    });
                }
            }
            let mut fields = self.spare_fields();
            let mut extras = Vec::new();
            let after = lex::field_decl_ext(
                &line,
                rest,
                self.limits.max_fields,
                ErrorKind::InvalidKey,
                ErrorKind::InvalidLine,
                Rc::make_mut(&mut fields),
                current.then_some(&mut extras),
            )?;
            let group = if after.is_empty() {
                None
            } else {
                match after.strip_prefix(" group=").filter(|_| current) {
                    Some(name) => Some(self.group_clause(&line, name)?),
                    None => {
                        return Err(line.error_at(
                            ErrorKind::InvalidLine,
                            after,
                            "unexpected text after the field declaration",
                        ))
                    }
                }
            };
            let shaped = keyed
                || group.is_some()
                || !extras.is_empty()
                || (current && fields.iter().any(|name| shape::is_path(name)));
            if shaped {
                return self.shaped_table(line, s, count, fields, level, &extras, keyed, group);
            }
            Body::Rows {
                fields,
                level,
                shape: None,
            }
        } else if let Some(values) = rest.strip_prefix(':') {
            Body::Inline(values)
        } else {
            return Err(line.error_at(
                ErrorKind::InvalidLine,
                rest,
                "expected `{fields}`, `:` or the end of the line after the count",
            ));
        };
        Ok(Pending::Array {
            line,
            at: s,
            count,
            body,
        })
    }

    /// The pending table of a header with a layout beyond its field names (see [`Shape`]).
    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn shaped_table(
        &self,
        line: Line<'de>,
        at: &'de str,
        count: Count,
        mut fields: Fields<'de>,
        level: usize,
        extras: &[lex::DeclExtra<'de>],
        keyed: bool,
        group: Option<(Cow<'de, str>, &'de str)>,
    ) -> Result<Pending<'de>> {
        let decl = at
            .find('{')
            .map_or("", |i| &at[i..])
            .trim_end_matches([' ', '\t']);
        let declared = Declared {
            line: &line,
            decl,
            names: std::mem::take(Rc::make_mut(&mut fields)),
            extras,
            keyed,
            group,
            identity: self.identity,
            flatten: self.spec.current(),
        };
        let spec = self.spec;
        let (cells, shape) = Shape::new(declared, |line, token| {
            visit_scalar(spec, line, token, Build)
        })?;
        *Rc::make_mut(&mut fields) = cells;
        let shape = Rc::new(shape);
        let mut shapes = self.shapes.take();
        if shapes.len() < 8 {
            shapes.push(CachedShape {
                decl,
                keyed,
                fields: Rc::clone(&fields),
                shape: Rc::clone(&shape),
            });
        }
        self.shapes.set(shapes);
        Ok(Pending::Array {
            line,
            at,
            count,
            body: Body::Rows {
                fields,
                level,
                shape: Some(shape),
            },
        })
    }

    /// The cells and layout of a field declaration read before in this document (`decl` from
    /// its `{`, with any `group=` clause), if one of the last eight.
    fn cached_shape(&self, decl: &str, keyed: bool) -> Option<(Fields<'de>, Rc<Shape<'de>>)> {
        let shapes = self.shapes.take();
        let found = shapes
            .iter()
            .find(|c| c.keyed == keyed && c.decl == decl)
            .map(|c| (Rc::clone(&c.fields), Rc::clone(&c.shape)));
        self.shapes.set(shapes);
        found
    }

    /// The column of a ` group=name` clause (`s` after the `=`), with its text.
    #[cold]
    #[inline(never)]
    fn group_clause(&self, line: &Line<'de>, s: &'de str) -> Result<(Cow<'de, str>, &'de str)> {
        let (name, rest) = lex::key(line, s, b" \t").map_err(|e| {
            Error::new(
                ErrorKind::InvalidGroupHeader,
                format!("the group= clause does not name a column: {}", e.message()),
            )
            .or_position(|| line.position_of(s))
        })?;
        if !lex::trim(rest).is_empty() {
            return Err(line.error_at(
                ErrorKind::InvalidGroupHeader,
                rest,
                "unexpected text after the group= clause",
            ));
        }
        Ok((name, s))
    }

    /// Reads the first body line to decide the root: `=scalar`, an anonymous `## [N]` array,
    /// or an object.
    fn root(&mut self, header: Line<'de>) -> Result<(Pending<'de>, Root)> {
        let Some(line) = self.lines.peek()? else {
            return Ok((
                Pending::Object {
                    line: header,
                    level: 0,
                },
                Root::Object,
            ));
        };
        if line.indent != 0 {
            return Err(line.error(
                ErrorKind::InvalidIndent,
                "the first line of the body must not be indented",
            ));
        }
        if let Some(token) = line.text.strip_prefix('=') {
            self.lines.advance();
            return Ok((
                Pending::Scalar {
                    line,
                    token: lex::trim(token),
                },
                Root::Scalar,
            ));
        }
        if let Some(bracket) = line.text.strip_prefix("## ").filter(|s| s.starts_with('[')) {
            self.lines.advance();
            let pending = self.array_header(line, bracket, 0, None)?;
            let count = match &pending {
                Pending::Array { count, .. } => *count,
                _ => Count::Deferred,
            };
            return Ok((pending, Root::Array(count)));
        }
        Ok((
            Pending::Object {
                line: header,
                level: 0,
            },
            Root::Object,
        ))
    }

    /// Parses an object member line at `level`: `key=value`, `key[N]: values`, `## key`,
    /// `## key [N]` or `## key [N]{fields}`. The value goes to `out`, written in place: a
    /// returned pending value goes through memory and stalls on being read back.
    #[inline(always)] // one caller
    fn member(
        &self,
        line: Line<'de>,
        level: usize,
        out: &mut Option<Pending<'de>>,
    ) -> Result<Cow<'de, str>> {
        let text = line.text;
        if let Some(rest) = text.strip_prefix("## ") {
            if rest.starts_with('[') {
                return Err(line.error(
                    ErrorKind::InvalidLine,
                    "an anonymous `## [N]` array is only valid as the root value",
                ));
            }
            let quoted = rest.starts_with('"');
            let (key, after) = lex::key(&line, rest, b" \t")?;
            let after_trimmed = after.trim_end_matches([' ', '\t']);
            if after_trimmed.is_empty() {
                *out = Some(Pending::Object {
                    line,
                    level: level + 1,
                });
                return Ok(key);
            }
            if let Some(bracket) = after.strip_prefix(' ').filter(|s| s.starts_with('[')) {
                let pending = self.array_header(line, bracket, level, None)?;
                if let Pending::Array {
                    body: Body::Inline(_),
                    ..
                } = &pending
                {
                    return Err(line.error_at(
                        ErrorKind::InvalidLine,
                        bracket,
                        "a named inline array is written `key[N]: values`, without `## `",
                    ));
                }
                *out = Some(pending);
                return Ok(key);
            }
            if quoted {
                return Err(line.error_at(
                    ErrorKind::TrailingCharacters,
                    after,
                    "expected ` [N]` or the end of the line after a section name",
                ));
            }
            let name = rest.split(" [").next().unwrap_or(rest).trim_end();
            return Err(line.error_at(
                ErrorKind::InvalidKey,
                rest,
                format!(
                    "section name {name:?} is not a bare key ([A-Za-z_][A-Za-z0-9_]*); quote it"
                ),
            ));
        }
        if text.starts_with('#') {
            return Err(line.error(
                ErrorKind::InvalidLine,
                if text.starts_with("##") {
                    "a section line is `## name`, with one space"
                } else {
                    "a comment is `# ` followed by text (hash and space)"
                },
            ));
        }
        let quoted = text.starts_with('"');
        let (key, rest) = lex::key(&line, text, b"=[")?;
        if let Some(value) = rest.strip_prefix('=') {
            *out = Some(Pending::Scalar {
                line,
                token: lex::trim(value),
            });
            return Ok(key);
        }
        if rest.starts_with('[') {
            let pending = self.array_header(line, rest, level, None)?;
            if !matches!(
                &pending,
                Pending::Array {
                    body: Body::Inline(_),
                    ..
                }
            ) {
                return Err(line.error_at(
                    ErrorKind::InvalidLine,
                    rest,
                    "a `key[N]` member needs `: values`; blocks are written `## key [N]`",
                ));
            }
            *out = Some(pending);
            return Ok(key);
        }
        Err(line.error_at(
            if quoted {
                ErrorKind::TrailingCharacters
            } else {
                ErrorKind::InvalidLine
            },
            rest,
            "expected `key=value`, `key[N]: values` or a `## ` section",
        ))
    }

    /// Whether `line` could start an object member (used to tell an extra tabular row from
    /// the next member after a declared count is reached).
    fn looks_like_member(&self, line: &Line<'de>) -> bool {
        if line.text.starts_with("##") {
            return true;
        }
        match lex::key(line, line.text, b"=[") {
            Ok((_, rest)) => rest.starts_with('=') || rest.starts_with('['),
            Err(_) => false,
        }
    }

    /// The checks after the root value: only the trailer may follow; deferred counts must
    /// match it; a deferred section without a trailer is truncated input.
    fn finish(&mut self, root: Root) -> Result<()> {
        let mut summary = None;
        while let Some(line) = self.lines.next()? {
            if summary.is_none() && line.indent == 0 && header::is_metadata(&line) {
                summary = Some(header::parse_summary(line)?);
                continue;
            }
            let (kind, message) = if summary.is_some() {
                (
                    ErrorKind::InvalidLine,
                    "content after the `##! summary` trailer",
                )
            } else {
                match root {
                    Root::Array(Count::Known(_)) => (
                        ErrorKind::CountMismatch,
                        "more items than the root array declares",
                    ),
                    Root::Array(Count::Deferred) => (
                        ErrorKind::InvalidLine,
                        "a root array cannot be followed by other content",
                    ),
                    Root::Scalar => (ErrorKind::InvalidLine, "content after a root scalar"),
                    Root::Object => (ErrorKind::InvalidLine, "unexpected line"),
                }
            };
            return Err(line.error(kind, message));
        }
        if self.deferred.is_empty() {
            return Ok(());
        }
        self.deferred.sort_by_key(|(at, _)| *at);
        let Some(summary) = summary else {
            if !self.require_trailer {
                return Ok(());
            }
            let (at, _) = self.deferred[0];
            return Err(Error::at_line(
                ErrorKind::TruncatedInput,
                self.lines.end_line(),
                1,
                format!(
                    "the input ends without the `##! summary` trailer that the deferred [?] \
                     section at line {} requires: it may be truncated",
                    at.line
                ),
            ));
        };
        let Some(counts) = summary.counts()? else {
            return Err(summary.line.error(
                ErrorKind::CountMismatch,
                format!(
                    "the trailer has no counts= but the payload has {} deferred sections",
                    self.deferred.len()
                ),
            ));
        };
        if counts.len() != self.deferred.len() {
            return Err(summary.line.error_at(
                ErrorKind::CountMismatch,
                summary.get("counts").unwrap_or(summary.line.text),
                format!(
                    "the trailer lists {} counts but the payload has {} deferred sections",
                    counts.len(),
                    self.deferred.len()
                ),
            ));
        }
        for ((at, found), (declared, text)) in self.deferred.iter().zip(&counts) {
            if found != declared {
                return Err(summary.line.error_at(
                    ErrorKind::CountMismatch,
                    text,
                    format!(
                        "the trailer declares {declared} items for the [?] section at line {}, \
                         which has {found}",
                        at.line
                    ),
                ));
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Scalars and numbers

/// A decimal token past the largest double, in the current spec (§2.3.2: the domain is int64
/// and float64, whatever a target could hold).
#[cold]
fn past_doubles(lexeme: &str) -> Error {
    Error::new(
        ErrorKind::OutOfRange,
        format!(
            "the number {lexeme} is past the largest double, outside the numeric domain of spec \
             v3.5.3 (int64 and float64, §2.3.2): model it as a string, or read it as v3.1 \
             (`DecoderOptions::spec(Spec::V3_1)`, `agentwire decode --spec 3.1`)"
        ),
    )
}

#[cold]
fn out_of_range(lexeme: &str) -> Error {
    Error::new(
        ErrorKind::OutOfRange,
        format!(
            "the number {lexeme} cannot be represented exactly (the numeric domain is i64, u64, \
             i128/u128 for typed targets, and f64; enable serde_json's arbitrary_precision \
             feature to decode it into serde_json::Value losslessly)"
        ),
    )
}

#[cold]
fn outside_int64(lexeme: &str) -> Error {
    Error::new(
        ErrorKind::OutOfRange,
        format!(
            "the integer {lexeme} is outside the numeric domain of spec v3.5.3, the signed \
             64-bit integers [-9223372036854775808, 9223372036854775807] (§2.3.2): model \
             larger values as strings, or read them as v3.1 \
             (`DecoderOptions::spec(Spec::V3_1)`, `agentwire decode --spec 3.1`)"
        ),
    )
}

/// A parsed number in the numeric domain of `spec`. From v3.5.3 (§2.3.2) a token without
/// fraction or exponent is an integer that must fit `i64` (`-0` is zero), and any other token
/// is a double: the nearest one when the token has more digits than a double holds (kept
/// exactly as serde_json's arbitrary-precision number when that is enabled), `out_of_range`
/// past the largest. In v3.1 the domain is every exact value (see [`visit_number`]).
#[inline]
fn in_domain(spec: Spec, lexeme: &str, number: Number) -> Result<Number> {
    if !spec.current() {
        return Ok(number);
    }
    match number {
        Number::U64(v) if v > i64::MAX as u64 => Err(outside_int64(lexeme)),
        Number::U64(_) | Number::I64(_) => Ok(number),
        Number::U128(..) | Number::I128(..) => Err(outside_int64(lexeme)),
        Number::F64(_) | Number::Inexact(_) if !number::is_integer_lexeme(lexeme) => match number {
            Number::Inexact(v) if v.is_finite() && !arbitrary_precision() => Ok(Number::F64(v)),
            // Past the largest double: outside the domain, with serde_json's
            // `arbitrary_precision` as without it.
            Number::Inexact(v) if v.is_infinite() => Err(past_doubles(lexeme)),
            _ => Ok(number),
        },
        // `-0`, or an integer beyond 128 bits.
        Number::F64(_) if lexeme == "-0" => Ok(Number::U64(0)),
        Number::F64(_) | Number::Inexact(_) => Err(outside_int64(lexeme)),
    }
}

/// Visits a number exactly: integers as integers, `-0` and exact decimals as `f64`; numbers
/// no native type holds go to serde_json's arbitrary-precision form when it is enabled and
/// are `out_of_range` otherwise (spec §2.3.2: never silently approximate). The current spec
/// narrows the domain first ([`in_domain`]).
fn visit_number<'de, V: Visitor<'de>>(
    spec: Spec,
    lexeme: &'de str,
    visitor: V,
) -> Result<V::Value> {
    let widen = |e: Error| {
        if matches!(e.kind(), ErrorKind::Custom | ErrorKind::TypeMismatch) {
            out_of_range(lexeme)
        } else {
            e
        }
    };
    match in_domain(spec, lexeme, number::parse(lexeme))? {
        Number::U64(v) => visitor.visit_u64(v),
        Number::I64(v) => visitor.visit_i64(v),
        Number::F64(v) => visitor.visit_f64(v),
        // Without arbitrary precision, a big integer that is exactly a double's shortest
        // spelling (an f64 of 1e20 is encoded `100000000000000000000`) decodes to that double.
        Number::U128(_, Some(f)) if !arbitrary_precision() => visitor.visit_f64(f),
        Number::I128(_, Some(f)) if !arbitrary_precision() => visitor.visit_f64(f),
        Number::U128(v, _) => visitor.visit_u128(v).map_err(widen),
        Number::I128(v, _) => visitor.visit_i128(v).map_err(widen),
        Number::Inexact(_) if arbitrary_precision() => visitor.visit_map(NumberMap {
            lexeme: Some(lexeme),
        }),
        Number::Inexact(_) => Err(out_of_range(lexeme)),
    }
}

/// serde_json's arbitrary-precision number: a map of one entry,
/// `{"$serde_json::private::Number": "<lexeme>"}`.
struct NumberMap<'de> {
    lexeme: Option<&'de str>,
}

impl<'de> de::MapAccess<'de> for NumberMap<'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        if self.lexeme.is_none() {
            return Ok(None);
        }
        seed.deserialize(de::value::BorrowedStrDeserializer::new(
            super::tape::NUMBER_TOKEN,
        ))
        .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let lexeme = self.lexeme.take().unwrap_or("0");
        seed.deserialize(de::value::BorrowedStrDeserializer::new(lexeme))
    }
}

/// Classifies a value-position scalar and visits it; `~` and attachment markers are errors
/// here (they are only valid in tabular cells, which handle them before).
fn visit_scalar<'de, V: Visitor<'de>>(
    spec: Spec,
    line: &Line<'de>,
    token: &'de str,
    visitor: V,
) -> Result<V::Value> {
    let result = match lex::scalar(line, token)? {
        Scalar::Int(v) if v >= 0 => visitor.visit_u64(v as u64),
        Scalar::Int(v) => visitor.visit_i64(v),
        Scalar::Null => visitor.visit_unit(),
        Scalar::Bool(b) => visitor.visit_bool(b),
        Scalar::Number(lexeme) => visit_number(spec, lexeme, visitor),
        Scalar::Str(Cow::Borrowed(s)) => visitor.visit_borrowed_str(s),
        Scalar::Str(Cow::Owned(s)) => visitor.visit_string(s),
        Scalar::Missing => Err(line.error_at(
            ErrorKind::InvalidMissing,
            token,
            "`~` (missing) is only valid in a tabular row cell",
        )),
        Scalar::Marker | Scalar::InlineMarker(_) => Err(line.error_at(
            ErrorKind::InvalidAttachmentMarker,
            token,
            "an attachment marker is only valid in a tabular row cell",
        )),
    };
    result.map_err(|e| e.or_position(|| line.position_of(token)))
}

// ---------------------------------------------------------------------------------------------
// Keys

/// A map key: an object key or field name.
enum KeyDe<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl<'de> KeyDe<'de> {
    fn of(key: &Cow<'de, str>) -> Self {
        match key {
            Cow::Borrowed(s) => KeyDe::Borrowed(s),
            Cow::Owned(s) => KeyDe::Owned(s.clone()),
        }
    }

    fn as_str(&self) -> &str {
        match self {
            KeyDe::Borrowed(s) => s,
            KeyDe::Owned(s) => s,
        }
    }

    fn parse<T: std::str::FromStr>(&self, what: &'static str) -> Result<T> {
        self.as_str()
            .parse()
            .map_err(|_| de::Error::invalid_type(de::Unexpected::Str(self.as_str()), &what))
    }
}

macro_rules! key_numbers {
    ($($method:ident => $visit:ident: $ty:ty,)*) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
                let v: $ty = self.parse(stringify!($ty))?;
                visitor.$visit(v)
            }
        )*
    };
}

impl<'de> de::Deserializer<'de> for KeyDe<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self {
            KeyDe::Borrowed(s) => visitor.visit_borrowed_str(s),
            KeyDe::Owned(s) => visitor.visit_string(s),
        }
    }

    key_numbers! {
        deserialize_i8 => visit_i8: i8,
        deserialize_i16 => visit_i16: i16,
        deserialize_i32 => visit_i32: i32,
        deserialize_i64 => visit_i64: i64,
        deserialize_i128 => visit_i128: i128,
        deserialize_u8 => visit_u8: u8,
        deserialize_u16 => visit_u16: u16,
        deserialize_u32 => visit_u32: u32,
        deserialize_u64 => visit_u64: u64,
        deserialize_u128 => visit_u128: u128,
        deserialize_f32 => visit_f32: f32,
        deserialize_f64 => visit_f64: f64,
        deserialize_bool => visit_bool: bool,
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        match self {
            KeyDe::Borrowed(s) => visitor.visit_enum(de::value::BorrowedStrDeserializer::new(s)),
            KeyDe::Owned(s) => visitor.visit_enum(de::value::StringDeserializer::new(s)),
        }
    }

    forward_to_deserialize_any! {
        char str string bytes byte_buf unit unit_struct seq tuple tuple_struct map struct
        identifier ignored_any
    }
}

/// The keys of one object seen so far, for `duplicate_key`: the first few inline (with a
/// one-word Bloom filter, so that a new key is seldom compared with them), the rest in a hash
/// set.
#[derive(Default)]
struct KeySet<'de> {
    small: [Cow<'de, str>; 8],
    len: usize,
    seen: u64,
    big: Option<HashSet<Cow<'de, str>>>,
}

impl<'de> KeySet<'de> {
    /// Adds `key`; `false` if it was there already.
    #[allow(clippy::ptr_arg)] // the set stores the Cow itself
    fn insert(&mut self, key: &Cow<'de, str>) -> bool {
        if let Some(big) = &mut self.big {
            return big.insert(key.clone());
        }
        let bit = super::encode::key_bit(key);
        if self.seen & bit != 0
            && self.small[..self.len]
                .iter()
                .any(|seen| super::encode::key_eq(seen, key))
        {
            return false;
        }
        self.seen |= bit;
        if self.len < self.small.len() {
            self.small[self.len] = key.clone();
            self.len += 1;
        } else {
            let mut big: HashSet<Cow<'de, str>> = self.small.iter().cloned().collect();
            big.insert(key.clone());
            self.big = Some(big);
        }
        true
    }
}

// ---------------------------------------------------------------------------------------------
// serde_json values built directly

impl<'de> Parser<'de> {
    /// A pending value as a `serde_json::Value`: what [`Build`] makes of it through the
    /// deserializer, with objects of member lines (configs, nested sections) read here
    /// without the serde layers in between.
    fn build(&mut self, pending: Pending<'de>) -> Result<Value> {
        // Each form in a function of its own: the loop over member lines stays small (the
        // instruction cache holds it, and the forms a document uses).
        match pending {
            Pending::Scalar { line, token } => Build.deserialize(ScalarDe {
                spec: self.spec,
                line: &line,
                token,
            }),
            Pending::Object { line, level } => self.build_object(line, level),
            Pending::Array {
                line,
                at,
                count,
                body:
                    Body::Rows {
                        fields,
                        level,
                        shape: None,
                    },
            } => self.build_table(line, at, count, fields, None, level),
            Pending::Array {
                line,
                at,
                count,
                body:
                    Body::Rows {
                        fields,
                        level,
                        shape: Some(shape),
                    },
            } => self.build_shaped_table(line, at, count, fields, shape, level),
            Pending::Array {
                line,
                at,
                count,
                body: Body::Inline(values),
            } => self.build_inline_array(line, at, count, values),
            Pending::InlineObject { line, fields } => self.build_inline_object(line, &fields),
            pending => Build.deserialize(ValueDe { p: self, pending }),
        }
    }

    /// An object of member lines at `level`, opened by `line`.
    fn build_object(&mut self, line: Line<'de>, level: usize) -> Result<Value> {
        self.enter(&line)?;
        let mut members = Map::with_capacity(build::UNKNOWN_MEMBERS);
        self.build_members(level, &mut members)
            .map_err(|e| e.or_position(|| line_position(&line)))?;
        self.leave();
        Ok(Value::Object(members))
    }

    /// A table (as `ValueDe::deserialize_any` reads one into `Build`).
    #[inline(never)]
    fn build_table(
        &mut self,
        line: Line<'de>,
        at: &'de str,
        count: Count,
        fields: Fields<'de>,
        consts: Option<Rc<Consts<'de>>>,
        level: usize,
    ) -> Result<Value> {
        self.enter(&line)?;
        let buffers = self.spare_rows.pop().unwrap_or_default();
        let room = self.lines.remaining_bytes();
        let resume = self.resume.take();
        let mut seq = RowSeq {
            p: &mut *self,
            st: Table::new(fields, None, level, count, line, at, buffers),
        };
        seq.st.consts = consts;
        if let Some(resume) = resume {
            seq.st.found = resume.found;
        }
        let mut items = Vec::with_capacity(build::array_capacity(remaining(count, 0, room)));
        seq.build(&mut items)
            .map_err(|e| e.or_position(|| line.position_of(at)))?;
        let reached = matches!(count, Count::Known(n) if seq.st.found >= n);
        if !resume.is_some_and(|r| r.partial) || reached {
            seq.end()?;
        }
        let table = seq.st;
        self.recycle(table);
        self.leave();
        Ok(Value::Array(items))
    }

    /// A table with a layout ([`Shape`]): an array, or for a keyed map an object.
    #[inline(never)]
    fn build_shaped_table(
        &mut self,
        line: Line<'de>,
        at: &'de str,
        count: Count,
        fields: Fields<'de>,
        shape: Rc<Shape<'de>>,
        level: usize,
    ) -> Result<Value> {
        self.enter(&line)?;
        let keyed = shape.keyed;
        let shaped = self.shaped(Some(shape));
        let buffers = self.spare_rows.pop().unwrap_or_default();
        let room = self.lines.remaining_bytes();
        // A table whose rows stand alone may be read in pieces (`opens_plain_table`).
        let resume = self.resume.take();
        let mut seq = RowSeq {
            p: &mut *self,
            st: Table::new(fields, shaped, level, count, line, at, buffers),
        };
        if let Some(resume) = resume {
            seq.st.found = resume.found;
        }
        let value = if keyed {
            let mut map = Map::with_capacity(build::reserve(remaining(count, 0, room)));
            seq.build_shaped(None, Some(&mut map))
                .map_err(|e| e.or_position(|| line.position_of(at)))?;
            Value::Object(map)
        } else {
            let mut items = Vec::with_capacity(build::array_capacity(remaining(count, 0, room)));
            seq.build_shaped(Some(&mut items), None)
                .map_err(|e| e.or_position(|| line.position_of(at)))?;
            Value::Array(items)
        };
        let reached = matches!(count, Count::Known(n) if seq.st.found >= n);
        if !resume.is_some_and(|r| r.partial) || reached {
            seq.end()?;
        }
        let table = seq.st;
        self.recycle(table);
        self.leave();
        Ok(value)
    }

    /// An inline array (as `ValueDe::deserialize_any` reads one into `Build`).
    #[inline(never)]
    fn build_inline_array(
        &mut self,
        line: Line<'de>,
        at: &'de str,
        count: Count,
        values: &'de str,
    ) -> Result<Value> {
        self.enter(&line)?;
        let mut seq = InlineSeq::new(self, line, at, count, values);
        let capacity = build::array_capacity(remaining(count, 0, values.len()));
        let mut items = Vec::with_capacity(capacity);
        while let Some(token) = seq.values.as_mut().and_then(Iterator::next) {
            seq.found += 1;
            seq.p.check_elements(&seq.line, seq.found)?;
            let item = Build
                .deserialize(ScalarDe {
                    spec: seq.p.spec,
                    line: &seq.line,
                    token,
                })
                .map_err(|e| e.or_position(|| line.position_of(at)))?;
            items.push(item);
        }
        seq.end()?;
        self.leave();
        Ok(Value::Array(items))
    }

    /// A positional inline body (as `ValueDe::deserialize_any` reads one into `Build`).
    #[inline(never)]
    fn build_inline_object(&mut self, line: Line<'de>, fields: &Fields<'de>) -> Result<Value> {
        self.enter(&line)?;
        let mut tokens = InlineObjectAccess::new(self.spec, line, Rc::clone(fields))?.values;
        let mut values = std::mem::take(&mut self.row_values);
        values.clear();
        for _ in fields.iter() {
            let token = tokens.next().unwrap_or("");
            let value = scalar_value(self.spec, &line, token)
                .map_err(|e| e.or_position(|| line_position(&line)))?;
            values.push(Some(value));
        }
        let members = self.templates.object(fields, &mut values);
        self.row_values = values;
        self.leave();
        Ok(Value::Object(members))
    }

    /// The members of an object at `level` (the reading and the checks of [`ObjectAccess`];
    /// a repeated key is found by the map, before its value is read).
    fn build_members(&mut self, level: usize, members: &mut Map<String, Value>) -> Result<()> {
        // The members already there (a root object read in pieces) count toward the limit.
        let mut found = members.len() as u64;
        if self.reopen > 0 {
            self.reopen -= 1;
            self.reenter(level, members)?;
        }
        loop {
            let before = self.lines.cursor();
            let line = match self.lines.next_here(2 * level) {
                // The end of the object, most often (a dedent).
                lex::Next::Other(line) => line,
                next => {
                    if let lex::Next::Here(line) = next {
                        if self.plain_member(line, level, &mut found, members)? {
                            continue;
                        }
                        self.lines.unread(before, line);
                    }
                    if !self.lines.has_next()? {
                        return Ok(());
                    }
                    self.lines.peeked()
                }
            };
            let at = line.level()?;
            if at < level {
                return Ok(());
            }
            if at > level {
                return Err(unexpected_indent(&line, level));
            }
            if header::is_metadata(&line) {
                if level == 0 {
                    return Ok(());
                }
                return Err(trailer_not_at_top(&line));
            }
            let (key, pending) = self.other_member(line, level)?;
            let slot = self.take_member(&line, &mut found, members, key)?;
            slot.insert(self.build(pending)?);
        }
    }

    /// Re-enters the section the next line (`## key`, at `level`) opened in a unit before
    /// (see [`Carry::reopen`]): its members go on in `members[key]`.
    #[cold]
    fn reenter(&mut self, level: usize, members: &mut Map<String, Value>) -> Result<()> {
        let Some(line) = self.lines.next_at(2 * level) else {
            return Ok(());
        };
        let key = line.text.strip_prefix("## ").unwrap_or_default();
        let Some(Value::Object(inner)) = members.get_mut(key) else {
            return Err(line.error(ErrorKind::InvalidLine, "internal: no section to re-enter"));
        };
        self.enter(&line)?;
        self.build_members(level + 1, inner)
            .map_err(|e| e.or_position(|| line_position(&line)))?;
        self.leave();
        Ok(())
    }

    /// Reads member `line` (at `level`, consumed) when it is one of the most common forms:
    /// `key=value`, `key[N]: values` and `## key` with a bare key and plain values, and
    /// `## key [N]{a,b}` with plain fields. `false` for any other line, which
    /// [`Parser::member`] reads (the same way for these forms, and reporting their errors).
    #[inline(always)]
    fn plain_member(
        &mut self,
        line: Line<'de>,
        level: usize,
        found: &mut u64,
        members: &mut Map<String, Value>,
    ) -> Result<bool> {
        let text = line.text;
        let bare = lex::bare_key_len(text);
        if bare > 0 {
            match text.as_bytes().get(bare) {
                Some(b'=') => {
                    let key = &text[..bare];
                    let token = lex::trim(&text[bare + 1..]);
                    self.lines.advance();
                    *found += 1;
                    self.check_elements(&line, *found)?;
                    // A plain value cannot fail, so the map's own insert tells a repeated
                    // key (one call instead of an entry's, and the value made in place: see
                    // `plain_scalar_to`). The key is copied first, as serde_json does: the
                    // map's search reads the copy, and read at once, its bytes are loaded
                    // before the copy's stores land (a failed store forward in `memcmp`).
                    let owned = key.to_owned();
                    let mut repeated = false;
                    if !plain_scalar_to(
                        token,
                        To(|value| repeated = members.insert(owned, value).is_some()),
                    ) {
                        let slot = vacant_slot(members, key, &line)?;
                        slot.insert(visit_scalar(self.spec, &line, token, Build)?);
                    } else if repeated {
                        return Err(duplicate_key(&line, key));
                    }
                    return Ok(true);
                }
                Some(b'[') => {
                    // The key first (see above).
                    let key = &text[..bare];
                    let owned = key.to_owned();
                    if let Some(items) = self.plain_inline_array(&text[bare..]) {
                        // Read already (it cannot fail): the map's insert tells a repeated key.
                        self.lines.advance();
                        *found += 1;
                        self.check_elements(&line, *found)?;
                        if members.insert(owned, Value::Array(items)).is_some() {
                            return Err(duplicate_key(&line, key));
                        }
                        return Ok(true);
                    }
                }
                _ => {}
            }
        } else if let Some(rest) = text.strip_prefix("## ") {
            let bare = lex::bare_key_len(rest);
            if bare > 0 && bare == rest.len() {
                let slot = self.take_member(&line, found, members, rest)?;
                self.enter(&line)?;
                // The object goes in first and is filled in place: a map moved in after its
                // members is loaded whole just after its piecewise stores (a failed store
                // forward).
                let empty = Map::with_capacity(build::UNKNOWN_MEMBERS);
                let object = slot.insert(Value::Object(empty));
                if let Value::Object(object) = object {
                    self.build_members(level + 1, object)
                        .map_err(|e| e.or_position(|| line_position(&line)))?;
                }
                self.leave();
                return Ok(true);
            }
            if bare > 0 && rest.as_bytes().get(bare) == Some(&b' ') {
                let at = &rest[bare + 1..];
                if let Some((count, fields, consts)) = self.plain_table_header(at) {
                    let slot = self.take_member(&line, found, members, &rest[..bare])?;
                    slot.insert(self.build_table(line, at, count, fields, consts, level)?);
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// Consumes member `line`, counts it in `found` (the object's element limit), and gives
    /// the slot for its `key` (`duplicate_key` if taken), before its value is read.
    #[inline(always)]
    fn take_member<'m>(
        &mut self,
        line: &Line<'_>,
        found: &mut u64,
        members: &'m mut Map<String, Value>,
        key: impl Into<String>,
    ) -> Result<serde_json::map::VacantEntry<'m>> {
        self.lines.advance();
        *found += 1;
        self.check_elements(line, *found)?;
        vacant_slot(members, key, line)
    }

    /// The count and fields of a `[N]{a,b}` table header (`s` starts at its `[`) when it is
    /// plain: a known count within the limits, bare field names without spaces, none twice,
    /// within the field limit, nothing after the `}`; in the current spec also constant
    /// columns `name=value` of a plain scalar value (their [`Consts`]). `None` for any other
    /// header, which [`Parser::member`] reads (and reports the errors of).
    #[inline(never)]
    fn plain_table_header(
        &self,
        s: &'de str,
    ) -> Option<(Count, Fields<'de>, Option<Rc<Consts<'de>>>)> {
        let b = s.as_bytes();
        let (count, close) = lex::known_count(b)?;
        if count > self.limits.max_elements as u64
            || b.get(close + 1) != Some(&b'{')
            || b.last() != Some(&b'}')
        {
            return None;
        }
        // A constant column (`unit=cpu`), told before a field list is taken and given back
        // (113 such headers in the deep configuration).
        if lex::has_byte(&b[close..], b'=') {
            if !self.spec.current() {
                return None;
            }
            let (fields, consts) = self.const_decl(&s[close + 1..])?;
            return Some((Count::Known(count), fields, Some(consts)));
        }
        let mut fields = self.spare_fields();
        let names = Rc::make_mut(&mut fields);
        if !plain_decl(&s[close + 1..], self.limits.max_fields, names, None) {
            // (A header the general reading takes: its list is the next header's.)
            self.give_fields(fields);
            return None;
        }
        Some((Count::Known(count), fields, None))
    }

    /// The cells and constants of a plain declaration with constant columns (`decl` from its
    /// `{` to its `}`, the end of the line): bare names, none twice, within the field limit,
    /// at least one cell, and each constant's value a plain scalar token (bytes of a bare key,
    /// a number or `-`). `None` for any other, which [`Parser::member`] reads as a [`Shape`].
    #[inline(never)]
    fn const_decl(&self, decl: &'de str) -> Option<(Fields<'de>, Rc<Consts<'de>>)> {
        let mut cached = self.const_decls.take();
        let found = cached
            .iter()
            .find(|c| c.decl == decl)
            .map(|c| (Rc::clone(&c.fields), Rc::clone(&c.consts)));
        if found.is_some() {
            self.const_decls.set(cached);
            return found;
        }
        let made = plain_const_decl(decl, self.limits.max_fields);
        if let Some((fields, consts)) = &made {
            if cached.len() == 8 {
                cached.remove(0);
            }
            cached.push(ConstDecl {
                decl,
                fields: Rc::clone(fields),
                consts: Rc::clone(consts),
            });
        }
        self.const_decls.set(cached);
        made
    }

    /// The elements of a `[N]: values` inline array (`s` starts at its `[`) when it is plain:
    /// a known count within the limits, no quotes, every element one [`plain_scalar`] reads,
    /// and exactly `N` of them. `None` for any other array, which the general reading takes
    /// (and reports the errors of); nothing is consumed either way.
    #[inline]
    fn plain_inline_array(&self, s: &'de str) -> Option<Vec<Value>> {
        let b = s.as_bytes();
        let (n, i) = lex::known_count(b)?;
        if b.get(i + 1) != Some(&b':') {
            return None;
        }
        if n > self.limits.max_elements as u64 || self.depth >= self.limits.max_depth {
            return None;
        }
        // The encoder writes `: ` before the values.
        let values = &s[i + 2..];
        let values = values.strip_prefix(' ').unwrap_or(values);
        if lex::trim(values).is_empty() {
            return (n == 0).then(Vec::new);
        }
        if lex::has_byte(values.as_bytes(), b'"') {
            return None;
        }
        // `n` is at most the element limit, and the line holds more than one byte per element.
        let n = usize::try_from(n).ok()?;
        let mut cells = lex::plain_cells(values, b',');
        // The first element before the array, in the order serde_json allocates them.
        let mut items = Vec::new();
        let first = FirstOf {
            items: &mut items,
            capacity: build::array_capacity(Some(n.min(values.len() / 2 + 1))),
        };
        if !plain_scalar_to(cells.next()?, first) {
            return None;
        }
        for token in cells {
            if items.len() == n || !plain_scalar_to(token, &mut items) {
                return None;
            }
        }
        (items.len() == n).then_some(items)
    }
}

/// A scalar token (trimmed) as a `Value`, for the tokens seen most: bare strings, numbers
/// `f64` holds exactly, booleans, `-`. `None` for the others (quoted strings, `~`, `^`,
/// numbers beyond 64 bits), which [`visit_scalar`] reads: what both make of a token is the same.
#[inline(always)]
fn plain_scalar(token: &str) -> Option<Value> {
    let mut made = None;
    plain_scalar_to(token, To(|value| made = Some(value)));
    made
}

/// [`plain_scalar`] given to `put` where it is made (`false`, and `put` not called, for the
/// other tokens). The hot loops store their values through this: a `Value` returned and then
/// moved on at once is stored piecewise (its tag a byte) and loaded whole, and such a load
/// waits for the stores to retire instead of taking their data (a failed store forward, a
/// dozen cycles and more for each cell); made in the arm that knows its variant, it goes
/// straight to its place (see [`Put`]).
#[inline(always)]
fn plain_scalar_to(token: &str, put: impl Put) -> bool {
    let b = token.as_bytes();
    match b.first() {
        None => put.put(|| Value::String(String::new())),
        Some(b'"' | b'~' | b'^') => return false,
        Some(b'-' | b'0'..=b'9') => match lex::small_int(b) {
            Some(v) => put.put(|| Value::Number(v.into())),
            None => match number::short_decimal(token) {
                // Short decimals, the most common numbers past the small integers.
                Some(v) => match serde_json::Number::from_f64(v) {
                    Some(n) => put.put(|| Value::Number(n)),
                    None => put.put(|| Value::Null),
                },
                None => return plain_number_to(token, put),
            },
        },
        Some(b't') if token == "true" => put.put(|| Value::Bool(true)),
        Some(b'f') if token == "false" => put.put(|| Value::Bool(false)),
        Some(_) => put.put(|| Value::String(token.to_owned())),
    }
    true
}

/// Where [`plain_scalar_to`] puts a value: `make` runs there, so that an array's element is
/// made in the array's block. (`Vec::push` keeps the value on the stack across its possible
/// growth and copies it from there with wide loads that wait for the value's piecewise
/// stores; `Vec::extend` of one element reserves first, then writes what `make` returns in
/// place.)
trait Put: Sized {
    fn put(self, make: impl FnOnce() -> Value);
}

impl Put for &mut Vec<Value> {
    #[inline(always)]
    fn put(self, make: impl FnOnce() -> Value) {
        push_made(self, make);
    }
}

impl Put for &mut Vec<Option<Value>> {
    #[inline(always)]
    fn put(self, make: impl FnOnce() -> Value) {
        push_made(self, || Some(make()));
    }
}

/// The first element of an array: made, then the array's block allocated (serde_json's
/// order of allocation) and the element written there.
struct FirstOf<'a> {
    items: &'a mut Vec<Value>,
    capacity: usize,
}

impl Put for FirstOf<'_> {
    #[inline(always)]
    fn put(self, make: impl FnOnce() -> Value) {
        let first = make();
        *self.items = Vec::with_capacity(self.capacity);
        push_made(self.items, || first);
    }
}

/// Any other destination: `F` is given the value made.
struct To<F>(F);

impl<F: FnOnce(Value)> Put for To<F> {
    #[inline(always)]
    fn put(self, make: impl FnOnce() -> Value) {
        (self.0)(make());
    }
}

/// Appends what `make` returns to `items`, made in place (see [`Put`]).
#[inline(always)]
fn push_made<T>(items: &mut Vec<T>, make: impl FnOnce() -> T) {
    items.extend(std::iter::once_with(make));
}

/// Whether [`plain_scalar`] makes a string of `token` (not empty: an empty token is the
/// empty string there, but no keyed-map key on the general reading's terms).
fn plain_string(token: &str) -> bool {
    match token.as_bytes().first() {
        None | Some(b'"' | b'~' | b'^') => false,
        Some(b'-' | b'0'..=b'9') => token != "-" && !number::is_json_number(token),
        Some(b't') => token != "true",
        Some(b'f') => token != "false",
        Some(_) => true,
    }
}

/// The names of a plain declaration `decl` (from its `{` to its `}`, the end of the text) into
/// `names` (empty): bare names, none twice, within the field limit. With `consts`, also
/// constant columns `name=value` whose value is a plain scalar token (bytes of a bare key, a
/// number or `-`): their index among the names and value go there. `false` for any other
/// declaration, which the general reading takes (and reports the errors of).
fn plain_decl<'de>(
    decl: &'de str,
    max_fields: usize,
    names: &mut Vec<Cow<'de, str>>,
    mut consts: Option<&mut Vec<(usize, Value)>>,
) -> bool {
    let b = decl.as_bytes();
    let mut at = 1;
    loop {
        let n = lex::bare_key_len(&decl[at..]);
        let name = &decl[at..at + n];
        if n == 0 || names.len() == max_fields || names.iter().any(|f| f == name) {
            return false;
        }
        at += n;
        if let (Some(b'='), Some(consts)) = (b.get(at), consts.as_mut()) {
            let len = b[at + 1..]
                .iter()
                .take_while(|&&c| {
                    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'+' | b'-')
                })
                .count();
            // (The empty token is the general reading's error.)
            let Some(value) = plain_scalar(&decl[at + 1..at + 1 + len]).filter(|_| len > 0) else {
                return false;
            };
            consts.push((names.len(), value));
            at += 1 + len;
        }
        names.push(Cow::Borrowed(name));
        at += 1;
        match b.get(at - 1) {
            Some(b',') => {}
            Some(b'}') => return at == b.len(),
            _ => return false,
        }
    }
}

/// [`Parser::const_decl`]'s reading of a declaration not seen before: its cells (the names
/// that are not constants; at least one, else the general reading's error) and [`Consts`].
fn plain_const_decl<'de>(
    decl: &'de str,
    max_fields: usize,
) -> Option<(Fields<'de>, Rc<Consts<'de>>)> {
    let mut names = Vec::new();
    let mut values = Vec::new();
    if !plain_decl(decl, max_fields, &mut names, Some(&mut values)) {
        return None;
    }
    let cells: Vec<Cow<'de, str>> = names
        .iter()
        .enumerate()
        .filter(|(i, _)| !values.iter().any(|(c, _)| c == i))
        .map(|(_, name)| name.clone())
        .collect();
    if cells.is_empty() {
        return None;
    }
    Some((Rc::new(cells), Rc::new(Consts { names, values })))
}

/// The values of a plain row's cells (`n` of them, from `cells`) into `values`: `false` when
/// a cell is not a plain scalar or a well-formed quoted string, or there are not `n` cells.
#[inline(always)]
fn row_values<'de>(
    values: &mut Vec<Option<Value>>,
    n: usize,
    line: &Line<'de>,
    mut cells: impl Iterator<Item = &'de str>,
) -> bool {
    values.clear();
    for _ in 0..n {
        let Some(token) = cells.next() else {
            return false;
        };
        if token == "~" {
            values.push(None);
            continue;
        }
        if plain_scalar_to(token, To(|value| values.push(Some(value)))) {
            continue;
        }
        match token.starts_with('"').then(|| plain_quoted(line, token)) {
            Some(Some(value)) => values.push(Some(value)),
            _ => return false,
        }
    }
    cells.next().is_none()
}

/// [`row_values`] of a row with a `"` (quoted cells, which stay on the plain-row path: a row
/// with one would otherwise take the general reading, whose code, in a table of mostly plain
/// rows, crowds the instruction cache), unless it has a `^` (an attachment marker).
#[inline(never)]
fn quoted_row_values<'de>(values: &mut Vec<Option<Value>>, n: usize, line: &Line<'de>) -> bool {
    !lex::has_byte(line.text.as_bytes(), b'^')
        && row_values(values, n, line, lex::split(line.text, b'|'))
}

/// A quoted cell `token` as [`scalar_value`] reads it, when it is one well-formed quoted
/// string (`None` otherwise: the general reading reports the error).
#[inline(never)]
fn plain_quoted<'a>(line: &Line<'a>, token: &'a str) -> Option<Value> {
    match lex::quoted(line, token) {
        Ok((s, used)) if used == token.len() => Some(Value::String(s.into_owned())),
        _ => None,
    }
}

/// A value-position scalar token as `Build` makes it from [`ScalarDe`]: [`plain_scalar`]
/// first, [`visit_scalar`] for the rest.
#[inline(always)]
pub(crate) fn scalar_value(spec: Spec, line: &Line<'_>, token: &str) -> Result<Value> {
    match plain_scalar(token) {
        Some(value) => Ok(value),
        None => visit_scalar(spec, line, token, Build),
    }
}

/// [`plain_scalar_to`] of a token that starts like a number but is neither a small integer
/// nor a short decimal.
#[inline(never)]
fn plain_number_to(token: &str, put: impl Put) -> bool {
    if token == "-" {
        put.put(|| Value::Null);
        return true;
    }
    if !number::is_json_number(token) {
        put.put(|| Value::String(token.to_owned()));
        return true;
    }
    // As `visit_number` gives them to `Build` in every version's domain; the rest (an integer
    // beyond i64, `-0`, where the versions differ) go through it.
    match number::parse(token) {
        Number::U64(v) if v <= i64::MAX as u64 => put.put(|| Value::Number(v.into())),
        Number::I64(v) => put.put(|| Value::Number(v.into())),
        // A double only when the token is one: an integer token too long for 64 bits parses
        // as a double too, and is the general path's (`out_of_range` in the current spec,
        // exact in v3.1).
        Number::F64(v)
            if token != "-0" && token.bytes().any(|b| matches!(b, b'.' | b'e' | b'E')) =>
        {
            put.put(|| build::float(v));
        }
        _ => return false,
    }
    true
}

/// The slot for a new member `key` of an object, or `duplicate_key` at `line`.
#[inline(always)]
fn vacant_slot<'m>(
    members: &'m mut Map<String, Value>,
    key: impl Into<String>,
    line: &Line<'_>,
) -> Result<serde_json::map::VacantEntry<'m>> {
    match members.entry(key) {
        Entry::Vacant(slot) => Ok(slot),
        Entry::Occupied(seen) => Err(duplicate_key(line, seen.key())),
    }
}

impl<'de> Parser<'de> {
    /// [`Parser::member`] for the member lines [`Parser::build_members`] does not read itself.
    #[inline(never)]
    fn other_member(&self, line: Line<'de>, level: usize) -> Result<(Cow<'de, str>, Pending<'de>)> {
        let mut pending = None;
        let key = self.member(line, level, &mut pending)?;
        let pending = pending.ok_or_else(|| line.error(ErrorKind::TypeMismatch, "no value"))?;
        Ok((key, pending))
    }
}

/// Nesting past the depth limit, or a container past the element limit, at `line`.
#[cold]
#[inline(never)]
fn over_limit(line: &Line<'_>, limit: Limit, max: usize) -> Error {
    let message = if limit == Limit::Depth {
        format!("nesting exceeds the limit of {max} levels")
    } else {
        format!("a container exceeds the limit of {max} elements")
    };
    line.error(ErrorKind::LimitExceeded(limit), message)
}

#[cold]
fn unexpected_indent(line: &Line<'_>, level: usize) -> Error {
    line.error(
        ErrorKind::InvalidIndent,
        format!("unexpected indentation: expected {} spaces here", level * 2),
    )
}

#[cold]
fn trailer_not_at_top(line: &Line<'_>) -> Error {
    line.error(
        ErrorKind::InvalidLine,
        "the `##! summary` trailer is only valid at the top level",
    )
}

#[cold]
fn duplicate_key(line: &Line<'_>, key: &str) -> Error {
    line.error(
        ErrorKind::DuplicateKey,
        format!("key {key:?} appears twice in one object"),
    )
}

// ---------------------------------------------------------------------------------------------
// Values

/// A scalar token (trimmed) on its line (borrowed: copying a line per cell costs more than
/// the cell's parse).
struct ScalarDe<'a, 'de> {
    spec: Spec,
    line: &'a Line<'de>,
    token: &'de str,
}

impl<'de> ScalarDe<'_, 'de> {
    /// Classifies the token; numbers go to `number`, everything else to `visit_scalar`.
    fn number<V: Visitor<'de>>(
        self,
        visitor: V,
        number: impl FnOnce(&Line<'de>, Number, &'de str, V) -> Result<V::Value>,
    ) -> Result<V::Value> {
        let ScalarDe { spec, line, token } = self;
        match lex::scalar(line, token)? {
            Scalar::Int(v) if v >= 0 => number(line, Number::U64(v as u64), token, visitor),
            Scalar::Int(v) => number(line, Number::I64(v), token, visitor),
            Scalar::Number(lexeme) => in_domain(spec, lexeme, number::parse(lexeme))
                .and_then(|n| number(line, n, lexeme, visitor)),
            _ => return visit_scalar(spec, line, token, visitor),
        }
        .map_err(|e| e.or_position(|| line.position_of(token)))
    }
}

macro_rules! int_targets {
    ($($method:ident,)*) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
                self.number(visitor, |_, n, lexeme, visitor| match n {
                    Number::U64(v) => visitor.visit_u64(v),
                    Number::I64(v) => visitor.visit_i64(v),
                    Number::U128(v, _) => visitor.visit_u128(v),
                    Number::I128(v, _) => visitor.visit_i128(v),
                    // Any spelling of an integer (`-0`, `1e+21`, `1.5e1`) is an integer.
                    Number::F64(v) | Number::Inexact(v) => match number::exact_integer(lexeme) {
                        Some(Integer::U(i)) => match u64::try_from(i) {
                            Ok(i) => visitor.visit_u64(i),
                            Err(_) => visitor.visit_u128(i),
                        },
                        Some(Integer::I(i)) => match i64::try_from(i) {
                            Ok(i) => visitor.visit_i64(i),
                            Err(_) => visitor.visit_i128(i),
                        },
                        None if matches!(n, Number::F64(_)) => visitor.visit_f64(v),
                        None => Err(out_of_range(lexeme)),
                    },
                })
            }
        )*
    };
}

macro_rules! float_targets {
    ($($method:ident,)*) => {
        $(
            /// An explicit float target accepts the nearest double (it asked for one).
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
                self.number(visitor, |line, n, lexeme, visitor| match n {
                    Number::U64(v) => visitor.visit_u64(v),
                    Number::I64(v) => visitor.visit_i64(v),
                    Number::F64(v) | Number::U128(_, Some(v)) | Number::I128(_, Some(v)) => {
                        visitor.visit_f64(v)
                    }
                    Number::U128(..) | Number::I128(..) | Number::Inexact(_) => {
                        let v = lexeme.parse::<f64>().unwrap_or(f64::NAN);
                        if v.is_finite() {
                            visitor.visit_f64(v)
                        } else {
                            Err(line.error_at(
                                ErrorKind::OutOfRange,
                                lexeme,
                                format!("the number {lexeme} overflows f64"),
                            ))
                        }
                    }
                })
            }
        )*
    };
}

impl<'de> de::Deserializer<'de> for ScalarDe<'_, 'de> {
    type Error = Error;

    #[inline]
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visit_scalar(self.spec, self.line, self.token, visitor)
    }

    int_targets! {
        deserialize_i8, deserialize_i16, deserialize_i32, deserialize_i64, deserialize_i128,
        deserialize_u8, deserialize_u16, deserialize_u32, deserialize_u64, deserialize_u128,
    }

    float_targets! { deserialize_f32, deserialize_f64, }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.token == "-" {
            return visitor.visit_none();
        }
        visitor.visit_some(self)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match lex::scalar(self.line, self.token)? {
            Scalar::Str(Cow::Borrowed(s)) => visitor.visit_borrowed_bytes(s.as_bytes()),
            Scalar::Str(Cow::Owned(s)) => visitor.visit_byte_buf(s.into_bytes()),
            _ => self.deserialize_any(visitor),
        }
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        let ScalarDe { spec, line, token } = self;
        match lex::scalar(line, token)? {
            Scalar::Str(Cow::Borrowed(s)) => visitor
                .visit_enum(de::value::BorrowedStrDeserializer::new(s))
                .map_err(|e: Error| e.or_position(|| line.position_of(token))),
            Scalar::Str(Cow::Owned(s)) => visitor
                .visit_enum(de::value::StringDeserializer::new(s))
                .map_err(|e: Error| e.or_position(|| line.position_of(token))),
            _ => visit_scalar(spec, line, token, visitor),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        // Validate the token (markers, escapes); numbers against the current spec's domain,
        // which decides whether a payload is valid whatever reads it (v3.1 has none).
        match lex::scalar(self.line, self.token)? {
            Scalar::Missing | Scalar::Marker | Scalar::InlineMarker(_) => {
                return visit_scalar(self.spec, self.line, self.token, visitor);
            }
            Scalar::Number(lexeme) if self.spec.current() => {
                let n = in_domain(self.spec, lexeme, number::parse(lexeme))
                    .map_err(|e| e.or_position(|| self.line.position_of(self.token)))?;
                if matches!(n, Number::Inexact(v) if !v.is_finite()) {
                    return Err(
                        out_of_range(lexeme).or_position(|| self.line.position_of(self.token))
                    );
                }
            }
            _ => {}
        }
        visitor.visit_unit()
    }

    forward_to_deserialize_any! {
        bool char str string unit unit_struct seq tuple tuple_struct map struct identifier
    }
}

struct ValueDe<'a, 'de> {
    p: &'a mut Parser<'de>,
    pending: Pending<'de>,
}

/// `ValueDe` methods that hand a scalar to [`ScalarDe`] and anything else to `deserialize_any`.
macro_rules! scalar_or_any {
    ($($method:ident,)*) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
                match self.pending {
                    Pending::Scalar { line, token } => ScalarDe { spec: self.p.spec, line: &line, token }.$method(visitor),
                    pending => ValueDe { p: self.p, pending }.deserialize_any(visitor),
                }
            }
        )*
    };
}

impl<'de> de::Deserializer<'de> for ValueDe<'_, 'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let p = self.p;
        match self.pending {
            Pending::Scalar { line, token } => ScalarDe {
                spec: p.spec,
                line: &line,
                token,
            }
            .deserialize_any(visitor),
            Pending::Object { line, level } => {
                p.enter(&line)?;
                let mut access = ObjectAccess::new(p, level);
                let value = visitor
                    .visit_map(&mut access)
                    .map_err(|e| e.or_position(|| line_position(&line)))?;
                access.end(&line)?;
                p.leave();
                Ok(value)
            }
            Pending::Array {
                line,
                at,
                count,
                body,
            } => {
                p.enter(&line)?;
                let value = match body {
                    Body::Inline(values) => {
                        let mut seq = InlineSeq::new(p, line, at, count, values);
                        let value = visitor
                            .visit_seq(&mut seq)
                            .map_err(|e| e.or_position(|| line.position_of(at)))?;
                        seq.end()?;
                        value
                    }
                    Body::Items { level } => {
                        // A list read in pieces resumes after the items before (a root list,
                        // or a member of the sections the unit re-enters).
                        let resume = if level == p.reopened {
                            p.resume.take()
                        } else {
                            None
                        };
                        let mut seq = ItemSeq {
                            p: &mut *p,
                            line,
                            at,
                            count,
                            level,
                            found: resume.map_or(0, |r| r.found),
                        };
                        let value = visitor
                            .visit_seq(&mut seq)
                            .map_err(|e| e.or_position(|| line.position_of(at)))?;
                        let reached = matches!(count, Count::Known(n) if seq.found >= n);
                        if !resume.is_some_and(|r| r.partial) || reached {
                            seq.end()?;
                        }
                        value
                    }
                    Body::Rows {
                        fields,
                        level,
                        shape,
                    } => {
                        let buffers = p.spare_rows.pop().unwrap_or_default();
                        let keyed = shape.as_ref().is_some_and(|s| s.keyed);
                        let shaped = p.shaped(shape);
                        let mut seq = RowSeq {
                            p: &mut *p,
                            st: Table::new(fields, shaped, level, count, line, at, buffers),
                        };
                        let value = if keyed {
                            let mut access = KeyedAccess {
                                seq: &mut seq,
                                row: false,
                            };
                            let value = visitor
                                .visit_map(&mut access)
                                .map_err(|e| e.or_position(|| line.position_of(at)))?;
                            access.end()?;
                            value
                        } else {
                            visitor
                                .visit_seq(&mut seq)
                                .map_err(|e| e.or_position(|| line.position_of(at)))?
                        };
                        seq.end()?;
                        let table = seq.st;
                        p.recycle(table);
                        value
                    }
                };
                p.leave();
                Ok(value)
            }
            Pending::InlineObject { line, fields } => {
                p.enter(&line)?;
                let mut access = InlineObjectAccess::new(p.spec, line, fields)?;
                let value = visitor
                    .visit_map(&mut access)
                    .map_err(|e| e.or_position(|| line_position(&line)))?;
                access.end(&line)?;
                p.leave();
                Ok(value)
            }
        }
    }

    scalar_or_any! {
        deserialize_i8, deserialize_i16, deserialize_i32, deserialize_i64, deserialize_i128,
        deserialize_u8, deserialize_u16, deserialize_u32, deserialize_u64, deserialize_u128,
        deserialize_f32, deserialize_f64, deserialize_bytes, deserialize_byte_buf,
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.pending {
            Pending::Scalar { line, token } => ScalarDe {
                spec: self.p.spec,
                line: &line,
                token,
            }
            .deserialize_option(visitor),
            pending => visitor.visit_some(ValueDe { p: self.p, pending }),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        let p = self.p;
        match self.pending {
            Pending::Scalar { line, token } => ScalarDe {
                spec: p.spec,
                line: &line,
                token,
            }
            .deserialize_enum(_name, _variants, visitor),
            Pending::Object { line, level } => {
                p.enter(&line)?;
                let mut access = ObjectAccess::new(p, level);
                let value = visitor
                    .visit_enum(EnumAccess {
                        access: &mut access,
                    })
                    .map_err(|e| e.or_position(|| line_position(&line)))?;
                if access.next_key_seed(SKIP)?.is_some() {
                    return Err(line.error(
                        ErrorKind::TypeMismatch,
                        "an enum variant is an object with exactly one member",
                    ));
                }
                p.leave();
                Ok(value)
            }
            pending => ValueDe { p, pending }.deserialize_any(visitor),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.pending {
            Pending::Scalar { line, token } => ScalarDe {
                spec: self.p.spec,
                line: &line,
                token,
            }
            .deserialize_ignored_any(visitor),
            pending => ValueDe { p: self.p, pending }.deserialize_any(visitor),
        }
    }

    forward_to_deserialize_any! {
        bool char str string unit unit_struct seq tuple tuple_struct map struct identifier
    }
}

// ---------------------------------------------------------------------------------------------
// Objects

struct ObjectAccess<'a, 'de> {
    p: &'a mut Parser<'de>,
    level: usize,
    keys: KeySet<'de>,
    pending: Option<Pending<'de>>,
    found: u64,
}

impl<'a, 'de> ObjectAccess<'a, 'de> {
    fn new(p: &'a mut Parser<'de>, level: usize) -> Self {
        ObjectAccess {
            p,
            level,
            keys: KeySet::default(),
            pending: None,
            found: 0,
        }
    }

    /// After the visitor: it must have read every member.
    fn end(&mut self, line: &Line<'de>) -> Result<()> {
        if self.pending.is_some() || self.next_key_seed(SKIP)?.is_some() {
            return Err(line.error(
                ErrorKind::TypeMismatch,
                "the object has more members than the target type reads",
            ));
        }
        Ok(())
    }
}

impl<'de> de::MapAccess<'de> for ObjectAccess<'_, 'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        if let Some(pending) = self.pending.take() {
            // The visitor skipped a value: read past it.
            de::Deserializer::deserialize_ignored_any(
                ValueDe {
                    p: &mut *self.p,
                    pending,
                },
                IgnoredAny,
            )?;
        }
        if !self.p.lines.has_next()? {
            return Ok(None);
        }
        let line = self.p.lines.peeked();
        let level = line.level()?;
        if level < self.level {
            return Ok(None);
        }
        if level > self.level {
            return Err(unexpected_indent(&line, self.level));
        }
        if header::is_metadata(&line) {
            if self.level == 0 {
                return Ok(None);
            }
            return Err(trailer_not_at_top(&line));
        }
        let key = self.p.member(line, self.level, &mut self.pending)?;
        self.p.lines.advance();
        self.found += 1;
        self.p.check_elements(&line, self.found)?;
        if !self.keys.insert(&key) {
            return Err(duplicate_key(&line, &key));
        }
        seed.deserialize(KeyDe::of(&key))
            .map(Some)
            .map_err(|e| e.or_position(|| line_position(&line)))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        // A scalar is read in place (copying its line out costs a stall).
        if let Some(Pending::Scalar { line, token }) = &self.pending {
            let value = seed.deserialize(ScalarDe {
                spec: self.p.spec,
                line,
                token,
            });
            self.pending = None;
            return value;
        }
        let pending = self.pending.take().ok_or_else(|| {
            Error::new(
                ErrorKind::TypeMismatch,
                "a value was requested before its key",
            )
        })?;
        seed.deserialize(ValueDe {
            p: &mut *self.p,
            pending,
        })
    }
}

/// An object of one member read as an enum variant.
struct EnumAccess<'b, 'a, 'de> {
    access: &'b mut ObjectAccess<'a, 'de>,
}

impl<'b, 'a, 'de> de::EnumAccess<'de> for EnumAccess<'b, 'a, 'de> {
    type Error = Error;
    type Variant = Self;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Self)> {
        match self.access.next_key_seed(seed)? {
            Some(variant) => Ok((variant, self)),
            None => Err(Error::new(
                ErrorKind::TypeMismatch,
                "an enum variant is a string or an object with exactly one member",
            )),
        }
    }
}

impl<'de> de::VariantAccess<'de> for EnumAccess<'_, '_, 'de> {
    type Error = Error;

    fn unit_variant(self) -> Result<()> {
        self.access.next_value_seed(PhantomData::<()>)
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value> {
        self.access.next_value_seed(seed)
    }

    fn tuple_variant<V: Visitor<'de>>(mut self, _len: usize, visitor: V) -> Result<V::Value> {
        let pending = self.take_pending()?;
        de::Deserializer::deserialize_seq(
            ValueDe {
                p: &mut *self.access.p,
                pending,
            },
            visitor,
        )
    }

    fn struct_variant<V: Visitor<'de>>(
        mut self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        let pending = self.take_pending()?;
        de::Deserializer::deserialize_map(
            ValueDe {
                p: &mut *self.access.p,
                pending,
            },
            visitor,
        )
    }
}

impl<'de> EnumAccess<'_, '_, 'de> {
    fn take_pending(&mut self) -> Result<Pending<'de>> {
        self.access
            .pending
            .take()
            .ok_or_else(|| Error::new(ErrorKind::TypeMismatch, "an enum variant without a value"))
    }
}

// ---------------------------------------------------------------------------------------------
// Inline primitive arrays

struct InlineSeq<'a, 'de> {
    p: &'a mut Parser<'de>,
    line: Line<'de>,
    at: &'de str,
    count: Count,
    values: Option<lex::Cells<'de>>,
    found: u64,
}

impl<'a, 'de> InlineSeq<'a, 'de> {
    fn new(
        p: &'a mut Parser<'de>,
        line: Line<'de>,
        at: &'de str,
        count: Count,
        values: &'de str,
    ) -> Self {
        let values = (!lex::trim(values).is_empty()).then(|| lex::cells(values, b','));
        InlineSeq {
            p,
            line,
            at,
            count,
            values,
            found: 0,
        }
    }

    fn end(&mut self) -> Result<()> {
        if self.values.as_mut().and_then(Iterator::next).is_some() {
            return Err(self.line.error_at(
                ErrorKind::TypeMismatch,
                self.at,
                "the array has more elements than the target type reads",
            ));
        }
        self.p
            .settle_count(&self.line, self.at, self.count, self.found)
    }
}

impl<'de> de::SeqAccess<'de> for InlineSeq<'_, 'de> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        let Some(token) = self.values.as_mut().and_then(Iterator::next) else {
            return Ok(None);
        };
        self.found += 1;
        self.p.check_elements(&self.line, self.found)?;
        seed.deserialize(ScalarDe {
            spec: self.p.spec,
            line: &self.line,
            token,
        })
        .map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        remaining(self.count, self.found, self.line.text.len())
    }
}

/// The elements still to come by a declared count, as far as `room` bytes of input can hold
/// them (an element takes at least two bytes: a character and its line end or delimiter), so
/// that what a visitor reserves for them follows the input, not an untrusted count; a wrong
/// count is an error at the end.
fn remaining(count: Count, found: u64, room: usize) -> Option<usize> {
    match count {
        Count::Known(n) => {
            let n = usize::try_from(n.saturating_sub(found)).unwrap_or(usize::MAX);
            Some(n.min(room / 2 + 1))
        }
        Count::Deferred => None,
    }
}

// ---------------------------------------------------------------------------------------------
// Expanded items

struct ItemSeq<'a, 'de> {
    p: &'a mut Parser<'de>,
    line: Line<'de>,
    at: &'de str,
    count: Count,
    level: usize,
    found: u64,
}

impl<'de> ItemSeq<'_, 'de> {
    /// The next line if it is an item of this array (at its level, starting with `@`).
    fn next_item_line(&mut self) -> Result<Option<Line<'de>>> {
        if !self.p.lines.has_next()? {
            return Ok(None);
        }
        let line = self.p.lines.peeked();
        let level = line.level()?;
        if level < self.level {
            return Ok(None);
        }
        if level > self.level {
            return Err(line.error(
                ErrorKind::InvalidIndent,
                format!(
                    "unexpected indentation: expected {} spaces here",
                    self.level * 2
                ),
            ));
        }
        Ok(line.text.starts_with('@').then_some(line))
    }

    fn end(&mut self) -> Result<()> {
        let more = self.next_item_line()?;
        if let Some(line) = more {
            let done = matches!(self.count, Count::Known(n) if self.found >= n);
            return Err(if done {
                line.error(
                    ErrorKind::CountMismatch,
                    format!("more items than the declared [{}]", self.found),
                )
            } else {
                line.error(
                    ErrorKind::TypeMismatch,
                    "the array has more elements than the target type reads",
                )
            });
        }
        self.p
            .settle_count(&self.line, self.at, self.count, self.found)
    }
}

impl<'de> de::SeqAccess<'de> for ItemSeq<'_, 'de> {
    type Error = Error;

    fn size_hint(&self) -> Option<usize> {
        remaining(self.count, self.found, self.p.lines.remaining_bytes())
    }

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        if matches!(self.count, Count::Known(n) if self.found >= n) {
            return Ok(None);
        }
        let Some(line) = self.next_item_line()? else {
            return Ok(None);
        };
        let text = &line.text[1..];
        let digits = text.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(line.error(
                ErrorKind::InvalidItemId,
                "an expanded item starts with `@N ` (N its zero-based index)",
            ));
        }
        let id = text[..digits].parse::<u64>().unwrap_or(u64::MAX);
        if id != self.found {
            return Err(line.error(
                ErrorKind::InvalidItemId,
                format!("item @{} is at index {}", &text[..digits], self.found),
            ));
        }
        let Some(rest) = text[digits..].strip_prefix(' ') else {
            return Err(line.error_at(
                ErrorKind::InvalidLine,
                &text[digits..],
                "expected a space after the item id",
            ));
        };
        let pending = if let Some(token) = rest.strip_prefix('=') {
            Pending::Scalar {
                line,
                token: lex::trim(token),
            }
        } else if rest.trim_end_matches([' ', '\t']) == "{}" {
            Pending::Object {
                line,
                level: self.level + 1,
            }
        } else if rest.starts_with('[') {
            self.p.array_header(line, rest, self.level + 1, None)?
        } else {
            return Err(line.error_at(
                ErrorKind::InvalidLine,
                rest,
                "an expanded item is `@N =scalar`, `@N {}` or `@N [M]...`",
            ));
        };
        self.p.lines.advance();
        self.found += 1;
        self.p.check_elements(&line, self.found)?;
        seed.deserialize(ValueDe {
            p: &mut *self.p,
            pending,
        })
        .map(Some)
    }
}

// ---------------------------------------------------------------------------------------------
// Tabular rows

/// What a row cell holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CellKind {
    Scalar,
    Missing,
    /// `^`.
    Marker,
    /// `^{fields}`.
    InlineMarker,
}

#[derive(Debug, Clone, Copy)]
struct Cell<'de> {
    token: &'de str,
    kind: CellKind,
}

/// The child `.field rest` of a row at `level` (consumed) with its body skipped: every line at
/// least two levels below the row.
#[inline(always)]
fn traditional<'de>(
    p: &mut Parser<'de>,
    line: Line<'de>,
    rest: &'de str,
    level: usize,
) -> Result<Child<'de>> {
    let cursor = p.lines.cursor();
    let end = loop {
        match p.lines.peek()? {
            Some(body) if body.level()? >= level + 2 => p.lines.advance(),
            Some(next) => break Some(next.number),
            None => break None,
        }
    };
    Ok(Child::Traditional {
        line,
        rest: rest.strip_prefix(' ').unwrap_or(rest),
        cursor,
        end,
    })
}

/// A `.field` attachment without a `^` cell of its row: the value of a `>`-named member (never
/// a column, spec §7.4.6.1.4) when `extra` (the row has `@N` and no such column) and the spec
/// is the current one; else `orphan_attachment`.
#[cold]
#[inline(never)]
fn extra_attachment<'de>(
    p: &mut Parser<'de>,
    st: &mut Table<'de>,
    child: Line<'de>,
    key: Cow<'de, str>,
    rest: &'de str,
    extra: bool,
    level: usize,
) -> Result<()> {
    if !(extra && p.spec.current() && key.contains('>')) {
        return Err(child.error(
            ErrorKind::OrphanAttachment,
            format!("attachment .{key} has no matching `^` cell in an `@N` row above it"),
        ));
    }
    if st.extras.iter().any(|(name, _)| *name == key) {
        return Err(child.error(
            ErrorKind::DuplicateAttachment,
            format!("a second attachment for field {key:?} of this row"),
        ));
    }
    p.lines.advance();
    let body = traditional(p, child, rest, level)?;
    st.extras.push((key, body));
    Ok(())
}

/// Where a marker cell's body is.
#[derive(Debug, Clone, Copy)]
enum Child<'de> {
    /// A positional inline body line.
    Positional(Line<'de>),
    /// A `.field rest` line; the body follows at `cursor` and ends before line `end` (the next
    /// significant line's number, `None` at the end of input).
    Traditional {
        line: Line<'de>,
        rest: &'de str,
        cursor: Cursor,
        end: Option<usize>,
    },
    /// A `.field` body the `Value` builder read as it came (in the table's `built`).
    Built,
}

/// The state of one tabular array: its fields, schemas established so far, and the row being
/// read.
struct Table<'de> {
    fields: Fields<'de>,
    level: usize,
    count: Count,
    line: Line<'de>,
    at: &'de str,
    found: u64,
    /// Inline object schemas established per column (spec §7.4.5.1).
    inline: Vec<Option<Fields<'de>>>,
    /// Shared array schemas established per column (spec §7.4.5.3), with their layouts.
    shared: Vec<Option<(Fields<'de>, Layout<'de>)>>,
    /// The current row (the table's header line before the first).
    row: Line<'de>,
    cells: Vec<Cell<'de>>,
    children: Vec<Option<Child<'de>>>,
    /// The values of the current row's [`Child::Built`] attachments, by column.
    built: Vec<Option<Value>>,
    /// Where the current row's attachment region ends.
    after_row: Cursor,
    /// The table's layout beyond its field names and its state, when its header has one
    /// (boxed: plain tables stay small to move).
    shaped: Option<Box<Shaped<'de>>>,
    /// The current row's attachments for `>`-named members, which are never columns (spec
    /// §7.4.6.1.4): after the row's other members, in their order.
    extras: Vec<(Cow<'de, str>, Child<'de>)>,
    /// Shared array schemas established for `>`-named members (by name: spec §7.4.5 scopes a
    /// schema to a table and a field name).
    extra_shared: Vec<(Cow<'de, str>, (Fields<'de>, Layout<'de>))>,
    /// Whether the last row had an `@N` prefix (so attachments).
    row_has_id: bool,
    /// The template of the rows' objects (a table without a layout).
    template: Option<build::Hint>,
    /// The constant columns of a table without a layout, read on the plain-table path.
    consts: Option<Rc<Consts<'de>>>,
}

/// The [`build::Hint`]s of the objects a shaped table's rows make, one per [`Members`] (the
/// row's, and each flattened object's in it), by the members' address: the table's layout
/// ([`Shaped::shape`]), which holds them, is the table's as long as the hints are (both are
/// set together in [`Parser::shaped`]), so no other members take that address meanwhile.
/// Four: a layout with more nested objects looks the others up each time.
#[derive(Default)]
struct MemberTemplates([(usize, Option<build::Hint>); 4]);

impl MemberTemplates {
    /// The hint kept for `members`, if there is room for it.
    fn of(&mut self, members: &Members<'_>) -> Option<&mut Option<build::Hint>> {
        let address = std::ptr::from_ref(members) as usize;
        let i = self
            .0
            .iter()
            .position(|&(at, _)| at == address || at == 0)?;
        self.0[i].0 = address;
        Some(&mut self.0[i].1)
    }
}

/// A shaped table's layout and what its rows have shown so far.
struct Shaped<'de> {
    shape: Rc<Shape<'de>>,
    /// Value-grouping: the current group's sub-header, the rows it still declares, and the
    /// group values seen.
    group: Option<Group<'de>>,
    group_left: u64,
    groups: HashSet<String>,
    /// The identity values (or a keyed map's member keys) seen: they are unique (spec
    /// §10a.1, §7.2a.4).
    /// (A B-tree of borrowed keys where the input allows: no copy and no hashing of every
    /// key, and no large table to grow mid-document.)
    ids: BTreeSet<Cow<'de, str>>,
    /// The templates of the rows' objects, by the members that make them.
    templates: MemberTemplates,
}

/// A value-grouping sub-header `column=value [n]` (spec v3.6).
#[derive(Debug, Clone)]
struct Group<'de> {
    line: Line<'de>,
    token: &'de str,
    value: Value,
}

impl<'de> Table<'de> {
    #[allow(clippy::too_many_arguments)]
    fn new(
        fields: Fields<'de>,
        shaped: Option<Box<Shaped<'de>>>,
        level: usize,
        count: Count,
        line: Line<'de>,
        at: &'de str,
        (cells, children): (Vec<Cell<'de>>, Vec<Option<Child<'de>>>),
    ) -> Self {
        Table {
            fields,
            level,
            count,
            line,
            at,
            found: 0,
            inline: Vec::new(),
            shared: Vec::new(),
            row: line,
            cells,
            children,
            built: Vec::new(),
            after_row: Cursor {
                offset: 0,
                number: 0,
            },
            shaped,
            extras: Vec::new(),
            extra_shared: Vec::new(),
            row_has_id: false,
            template: None,
            consts: None,
        }
    }

    /// The table's layout, if it has one.
    fn shape(&self) -> Option<&Rc<Shape<'de>>> {
        self.shaped.as_ref().map(|s| &s.shape)
    }

    /// The current value group, in a grouped table.
    fn group(&self) -> Option<&Group<'de>> {
        self.shaped.as_ref().and_then(|s| s.group.as_ref())
    }

    /// The rows the current group still declares.
    fn group_left(&self) -> u64 {
        self.shaped.as_ref().map_or(0, |s| s.group_left)
    }

    /// Counts a row against its group.
    fn count_grouped_row(&mut self) {
        if let Some(shaped) = &mut self.shaped {
            shaped.group_left = shaped.group_left.saturating_sub(1);
        }
    }

    /// The inline schema established for column `c`, if any.
    fn inline_schema(&self, c: usize) -> Option<&Fields<'de>> {
        self.inline.get(c).and_then(Option::as_ref)
    }

    /// The shared array schema established for column `c`, if any.
    fn shared_schema(&self, c: usize) -> Option<&(Fields<'de>, Layout<'de>)> {
        self.shared.get(c).and_then(Option::as_ref)
    }

    /// Sets a schema of column `c` in `schemas` (allocated on first use: most tables have
    /// none).
    fn set<T: Clone>(schemas: &mut Vec<Option<T>>, n: usize, c: usize, fields: T) {
        if schemas.len() < n {
            schemas.resize(n, None);
        }
        schemas[c] = Some(fields);
    }

    fn eligible(&self, c: usize) -> bool {
        match self.cells[c].kind {
            CellKind::InlineMarker => true,
            CellKind::Marker => self.inline_schema(c).is_some(),
            _ => false,
        }
    }
}

/// A row's object, and its member key in a keyed map.
type RowObject = (Option<String>, Map<String, Value>);

struct RowSeq<'a, 'de> {
    p: &'a mut Parser<'de>,
    st: Table<'de>,
}

impl<'de> RowSeq<'_, 'de> {
    /// The next line if it is a row of this table. (Inlined: a line returned through memory
    /// is stored a word at a time and loaded two at a time, a failed store forward per row.)
    #[inline(always)]
    fn next_row_line(&mut self) -> Result<Option<Line<'de>>> {
        if self.st.shaped.is_some() && !self.group_ready()? {
            return Ok(None);
        }
        if !self.p.lines.has_next()? {
            return Ok(None);
        }
        let line = self.p.lines.peeked();
        let level = line.level()?;
        if level < self.st.level {
            return Ok(None);
        }
        if level > self.st.level {
            return Err(unexpected_indent(&line, self.st.level));
        }
        if line.text.starts_with("##") {
            return Ok(None);
        }
        Ok(Some(line))
    }

    fn end(&mut self) -> Result<()> {
        let done = matches!(self.st.count, Count::Known(n) if self.st.found >= n);
        if let Some(line) = self.next_row_line()? {
            if !done {
                return Err(line.error(
                    ErrorKind::TypeMismatch,
                    "the array has more elements than the target type reads",
                ));
            }
            if !self.p.looks_like_member(&line) {
                // After a row with attachments, a positional line no marker of the row takes
                // (spec §16.5); after any other row, one row too many.
                if self.st.row_has_id && !line.text.starts_with('@') {
                    return Err(line.error(
                        ErrorKind::OrphanInlineAttachment,
                        "a positional attachment body without an inline-schema marker to fill",
                    ));
                }
                return Err(line.error(
                    ErrorKind::CountMismatch,
                    format!("more rows than the declared [{}]", self.st.found),
                ));
            }
        }
        if self.st.group_left() > 0 {
            return Err(self.group_short());
        }
        self.p
            .settle_count(&self.st.line, self.st.at, self.st.count, self.st.found)
    }

    /// A group's sub-header declares more rows than follow it.
    #[cold]
    fn group_short(&self) -> Error {
        let (line, token) = match self.st.group() {
            Some(g) => (g.line, g.token),
            None => (self.st.line, self.st.at),
        };
        line.error_at(
            ErrorKind::CountMismatch,
            token,
            format!(
                "the group declares {} more rows than follow its sub-header",
                self.st.group_left()
            ),
        )
    }

    /// In a grouped table whose current group has all its rows, reads the next group's
    /// sub-header: `false` when the table ends there. `true` for any other table.
    #[cold]
    #[inline(never)]
    fn group_ready(&mut self) -> Result<bool> {
        let grouped = self.st.shape().is_some_and(|s| s.group.is_some());
        if !grouped || self.st.group_left() > 0 {
            return Ok(true);
        }
        self.group_header()
    }

    /// Reads the sub-header `column=value [n]` that opens the next group of a grouped table
    /// (spec v3.6): `false`, consuming nothing, when the next line is not one (the table
    /// ends there; an error if its declared count is not reached).
    #[cold]
    #[inline(never)]
    fn group_header(&mut self) -> Result<bool> {
        if !self.p.lines.has_next()? {
            return Ok(false);
        }
        let line = self.p.lines.peeked();
        if line.level()? != self.st.level || line.text.starts_with("##") {
            return Ok(false);
        }
        let short = matches!(self.st.count, Count::Known(n) if self.st.found < n);
        let Some((name, token, count)) = sub_header(&line)? else {
            if short {
                return Err(line.error(
                    ErrorKind::InvalidGroupHeader,
                    "expected a group sub-header `column=value [n]` here",
                ));
            }
            return Ok(false);
        };
        let group = self
            .st
            .shape()
            .and_then(|s| s.group.as_ref())
            .cloned()
            .unwrap_or_default();
        if name != group {
            if !short {
                return Ok(false);
            }
            return Err(line.error(
                ErrorKind::InvalidGroupHeader,
                format!("the sub-header names {name:?}, the table is grouped by {group:?}"),
            ));
        }
        let value = scalar_value(self.p.spec, &line, token)?;
        let Some(shaped) = &mut self.st.shaped else {
            return Ok(false);
        };
        if !shaped.groups.insert(value.to_string()) {
            return Err(line.error_at(
                ErrorKind::DuplicateGroup,
                token,
                format!("a second group for {name}={token}"),
            ));
        }
        self.p.lines.advance();
        shaped.group = Some(Group { line, token, value });
        shaped.group_left = count;
        Ok(true)
    }

    /// The checks of the current spec's layouts on a row: no attachments in a grouped table,
    /// none in flattened leaves or a keyed map's key column, a string key, a unique identity.
    #[cold]
    #[inline(never)]
    fn check_shaped_row(&mut self, line: &Line<'de>, has_id: bool, markers: bool) -> Result<()> {
        let Some(shape) = self.st.shape().cloned() else {
            return Ok(());
        };
        if shape.group.is_some() && (has_id || markers) {
            return Err(line.error(
                ErrorKind::InvalidGroupHeader,
                "the rows of a grouped table carry no attachments",
            ));
        }
        if markers {
            for (c, cell) in self.st.cells.iter().enumerate() {
                if shape.scalar_only[c]
                    && matches!(cell.kind, CellKind::Marker | CellKind::InlineMarker)
                {
                    return Err(line.error_at(
                        ErrorKind::InvalidAttachmentMarker,
                        cell.token,
                        format!(
                            "column {:?} holds only scalars (a flattened leaf or a key column)",
                            self.st.fields[c]
                        ),
                    ));
                }
            }
        }
        if shape.keyed {
            // The member key: a string, and a new one (checked here, before the row's values
            // are read, by both decoders).
            let token = self.st.cells[0].token;
            let Scalar::Str(key) = lex::scalar(line, token)? else {
                return Err(line.error_at(
                    ErrorKind::InvalidKeyedMap,
                    token,
                    "a keyed-map row starts with its member key, a string (quote one that reads \
                     as another scalar)",
                ));
            };
            if !self.seen_id(key) {
                return Err(duplicate_member(line, token));
            }
        }
        if let Some(c) = shape.identity {
            let cell = self.st.cells[c];
            if cell.kind == CellKind::Missing {
                return Err(line.error_at(
                    ErrorKind::InvalidKey,
                    cell.token,
                    "the identity column of a row is never `~`",
                ));
            }
            let id = scalar_value(self.p.spec, line, cell.token)?;
            if !self.seen_id(Cow::Owned(id.to_string())) {
                return Err(line.error_at(
                    ErrorKind::DuplicateKey,
                    cell.token,
                    format!(
                        "the identity {} appears in two rows (spec §10a.1)",
                        cell.token
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Records an identity (or member key) of a shaped table: `false` if seen before.
    fn seen_id(&mut self, id: Cow<'de, str>) -> bool {
        self.st
            .shaped
            .as_mut()
            .is_none_or(|shaped| shaped.ids.insert(id))
    }

    /// Splits a row line into cells and finds its attachments.
    ///
    /// With `eager` (the `Value` builder), the bodies of `.field` attachments are read as they
    /// come, in one pass, and kept for the row's object ([`Child::Built`]); otherwise each
    /// body is skipped, to be read when its cell is. An eager reading that fails is started
    /// over by its outermost row alone, with eager reading off for that row and everything in
    /// it, so that every error is the one, at the place, that reading the cells in order
    /// gives (the serde path's), and a failure costs one more pass, whatever the nesting.
    fn read_row(&mut self, line: Line<'de>, eager: bool) -> Result<()> {
        let st = &mut self.st;
        let mut text = line.text;
        let mut has_id = false;
        if let Some(rest) = text.strip_prefix('@') {
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            if digits > 0 && rest.as_bytes().get(digits) == Some(&b' ') {
                let id = rest[..digits].parse::<u64>().unwrap_or(u64::MAX);
                if id != st.found {
                    return Err(line.error(
                        ErrorKind::InvalidItemId,
                        format!("row @{} is at index {}", &rest[..digits], st.found),
                    ));
                }
                has_id = true;
                text = &rest[digits + 1..];
            }
        }
        st.cells.clear();
        let mut markers = false;
        for token in lex::cells(text, b'|') {
            let b = token.as_bytes();
            // By the first byte: one branch for most cells (matching on the whole token
            // branches on its length first).
            let kind = match b.first() {
                Some(b'~') if b.len() == 1 => CellKind::Missing,
                Some(b'^') => match b {
                    b"^" => CellKind::Marker,
                    [b'^', b'{', .., b'}'] => CellKind::InlineMarker,
                    _ => CellKind::Scalar,
                },
                _ => CellKind::Scalar,
            };
            markers |= matches!(kind, CellKind::Marker | CellKind::InlineMarker);
            st.cells.push(Cell { token, kind });
            if st.cells.len() > st.fields.len() {
                break;
            }
        }
        if st.cells.len() != st.fields.len() {
            let found = lex::split(text, b'|').count();
            return Err(line.error(
                ErrorKind::RowWidthMismatch,
                format!(
                    "row has {found} cells but the table declares {} fields",
                    st.fields.len()
                ),
            ));
        }
        if st.shaped.is_some() {
            self.check_shaped_row(&line, has_id, markers)?;
        }
        let st = &mut self.st;
        // Inline-schema markers establish their column's schema.
        let inline_markers = if markers { st.cells.len() } else { 0 };
        for c in 0..inline_markers {
            if st.cells[c].kind != CellKind::InlineMarker {
                continue;
            }
            let decl = &st.cells[c].token[1..];
            let (fields, after) = lex::field_decl(
                &line,
                decl,
                self.p.limits.max_fields,
                ErrorKind::InvalidAttachmentMarker,
                ErrorKind::InvalidAttachmentMarker,
            )?;
            if !after.is_empty() {
                return Err(line.error_at(
                    ErrorKind::InvalidAttachmentMarker,
                    after,
                    "unexpected text after the inline field declaration",
                ));
            }
            let n = st.fields.len();
            Table::set(&mut st.inline, n, c, Rc::new(fields));
        }
        self.p.lines.advance();
        st.row = line;
        // Only a row with an `@N` id has attachments (`children` is read for no other row).
        if has_id {
            st.children.clear();
            st.children.resize(st.fields.len(), None);
        }
        if !st.extras.is_empty() {
            st.extras.clear();
        }
        if eager && has_id && markers && !self.p.eager_off {
            self.eager_attachments(&line)?;
        } else {
            self.attachments(has_id, false)?;
        }
        let st = &mut self.st;
        if markers {
            if let Some(c) = (0..st.cells.len()).find(|&c| {
                matches!(st.cells[c].kind, CellKind::Marker | CellKind::InlineMarker)
                    && (!has_id || st.children[c].is_none())
            }) {
                let field = &st.fields[c];
                let token = st.cells[c].token;
                return Err(line.error_at(
                    ErrorKind::MissingAttachment,
                    token,
                    if has_id {
                        format!("field {field:?} is marked `^` but has no attachment body")
                    } else {
                        format!(
                            "field {field:?} is marked `^` but the row has no `@N` prefix to \
                             attach a body to"
                        )
                    },
                ));
            }
        }
        self.st.after_row = self.p.lines.cursor();
        self.st.row_has_id = has_id;
        if self.st.shaped.is_some() {
            self.st.count_grouped_row();
        }
        Ok(())
    }

    /// [`RowSeq::attachments`] of an `@N` row with markers, reading `.field` bodies as they
    /// come; the outermost attempt starts the region over without that if it fails.
    fn eager_attachments(&mut self, line: &Line<'de>) -> Result<()> {
        let n = self.st.cells.len();
        self.st.built.clear();
        self.st.built.resize_with(n, || None);
        if self.p.eager_attempt {
            // Inside an attempt: a failure is the outermost row's to handle.
            self.p.enter(line)?;
            self.attachments(true, true)?;
            self.p.leave();
            return Ok(());
        }
        let region = self.p.lines.cursor();
        let (depth, deferred) = (self.p.depth, self.p.deferred.len());
        // At the depth the row's cells are read at.
        self.p.eager_attempt = true;
        let read = self
            .p
            .enter(line)
            .and_then(|()| self.attachments(true, true));
        self.p.eager_attempt = false;
        if read.is_ok() {
            self.p.leave();
            return Ok(());
        }
        self.start_over(region, depth, deferred)
    }

    /// Reads the attachment region at `region` again, lazily, after a failed eager attempt
    /// (the row's reader turns eager reading back on when the row is done).
    #[cold]
    #[inline(never)]
    fn start_over(&mut self, region: Cursor, depth: usize, deferred: usize) -> Result<()> {
        self.p.lines.seek(region);
        self.p.depth = depth;
        self.p.deferred.truncate(deferred);
        self.p.eager_off = true;
        let st = &mut self.st;
        let n = st.cells.len();
        st.children.clear();
        st.children.resize(n, None);
        st.built.clear();
        st.extras.clear();
        self.attachments(true, false)
    }

    /// The attachment region of the row just read: `.field` lines and positional bodies at
    /// the row's level or one below, until the next row, a section, or a dedent. With
    /// `eager`, `.field` bodies of marker cells are read now (see [`RowSeq::read_row`]).
    fn attachments(&mut self, has_id: bool, eager: bool) -> Result<()> {
        let st = &mut self.st;
        let level = st.level;
        while self.p.lines.has_next()? {
            let child = self.p.lines.peeked();
            let child_level = child.level()?;
            if child_level < level {
                break;
            }
            if child_level > level + 1 {
                return Err(child.error(
                    ErrorKind::InvalidIndent,
                    "unexpected indentation (an attachment body follows a `.field` line)",
                ));
            }
            if let Some(name) = child.text.strip_prefix('.') {
                let (key, rest) = lex::key(&child, name, b" \t")?;
                // Under the current spec a `>` path names no column's attachment: a path
                // column is a flattened leaf, and a `>`-named member is never a column
                // (spec §7.4.6.1.4), so `."a>b"` beside an `"a>b"` column is the member's.
                let column = st
                    .fields
                    .iter()
                    .position(|f| *f == key)
                    .filter(|_| !(self.p.spec.current() && shape::is_path(&key)));
                let Some(c) = column.filter(|&c| has_id && st.cells[c].kind == CellKind::Marker)
                else {
                    // Not a marker's: a `>`-named member's, or an orphan.
                    let extra = has_id && column.is_none();
                    extra_attachment(self.p, st, child, key, rest, extra, level)?;
                    continue;
                };
                if st.children[c].is_some() {
                    return Err(child.error(
                        ErrorKind::DuplicateAttachment,
                        format!("a second attachment for field {key:?} of this row"),
                    ));
                }
                self.p.lines.advance();
                if eager {
                    let rest = rest.strip_prefix(' ').unwrap_or(rest);
                    let value = RowAccess {
                        p: &mut *self.p,
                        st: &mut *st,
                        col: 0,
                        value: None,
                    }
                    .body(child, rest, Some(c), None, Direct, None)?;
                    st.built[c] = Some(value);
                    st.children[c] = Some(Child::Built);
                    continue;
                }
                st.children[c] = Some(traditional(self.p, child, rest, level)?);
                continue;
            }
            let positional = child_level > level
                || !(child.text.starts_with("##") || child.text.starts_with('@'));
            let target = if has_id && positional {
                (0..st.cells.len()).find(|&c| st.children[c].is_none() && st.eligible(c))
            } else {
                None
            };
            match target {
                Some(c) => {
                    st.children[c] = Some(Child::Positional(child));
                    self.p.lines.advance();
                }
                None if child_level == level => break,
                None => {
                    return Err(child.error(
                        ErrorKind::OrphanInlineAttachment,
                        "a positional attachment body without an inline-schema marker to fill",
                    ))
                }
            }
        }
        Ok(())
    }

    /// The rows as `serde_json::Value`s: what [`Build`] makes of them through the
    /// deserializer ([`de::SeqAccess::next_element_seed`] and [`RowDe`]), with rows of
    /// scalar cells made here.
    fn build(&mut self, items: &mut Vec<Value>) -> Result<()> {
        loop {
            if matches!(self.st.count, Count::Known(n) if self.st.found >= n) {
                return Ok(());
            }
            let Some(line) = self.next_row_line()? else {
                return Ok(());
            };
            if !self.plain_row(&line, items)? {
                let row = self.general_row(line)?;
                items.push(row);
            }
        }
    }

    /// A row that is not [`RowSeq::plain_row`]: as `RowDe` reads one into `Build` (a table
    /// without a layout; [`RowSeq::general_object`]'s reading, one copy of it for both).
    #[inline]
    fn general_row(&mut self, line: Line<'de>) -> Result<Value> {
        let (_, members) = self.general_object(line)?;
        Ok(Value::Object(members))
    }

    /// A row read by [`RowSeq::read_row`], as an object (and its member key in a keyed map):
    /// its scalar cells here, its attachments through `RowAccess::read_at` (or as the eager
    /// reading kept them), the object by the table's layout if it has one.
    #[inline(never)]
    fn general_object(&mut self, line: Line<'de>) -> Result<(Option<String>, Map<String, Value>)> {
        let eager_off = self.p.eager_off;
        self.read_row(line, true)?;
        self.st.found += 1;
        self.p.check_elements(&line, self.st.found)?;
        let row = self.st.row;
        self.p.enter(&row)?;
        if let Some(shape) = self.st.shape() {
            self.p.check_nesting(&row, shape.nesting)?;
        }
        let n = self.st.cells.len();
        // The values first (attachments may hold tables, whose rows use the parser's own
        // buffer), then the object.
        let mut values = self.p.spare_values.pop().unwrap_or_default();
        values.clear();
        let mut access = RowAccess {
            p: &mut *self.p,
            st: &mut self.st,
            col: n,
            value: None,
        };
        let spec = access.p.spec;
        // A row with a layout reads its scalar cells before its attachments (the serde path
        // visits its members in their order, not the columns': see `earlier_cell_error`).
        let scalars_first = access.st.shaped.is_some();
        let mut attached = false;
        for c in 0..n {
            let cell = access.st.cells[c];
            // Scalars here, attachments (the uncommon cells) through `read_at`.
            let value = match cell.kind {
                CellKind::Missing => {
                    values.push(None);
                    continue;
                }
                CellKind::Scalar => {
                    if plain_scalar_to(cell.token, To(|value| values.push(Some(value)))) {
                        continue;
                    }
                    visit_scalar(spec, &row, cell.token, Build)
                }
                _ if scalars_first => {
                    attached = true;
                    values.push(None);
                    continue;
                }
                _ => access.attachment(c),
            }
            .map_err(|e| e.or_position(|| line_position(&row)))?;
            values.push(Some(value));
        }
        if attached {
            for (c, slot) in values.iter_mut().enumerate() {
                if matches!(
                    access.st.cells[c].kind,
                    CellKind::Scalar | CellKind::Missing
                ) {
                    continue;
                }
                let value = access
                    .attachment(c)
                    .map_err(|e| e.or_position(|| line_position(&row)))?;
                *slot = Some(value);
            }
        }
        let (key, mut members) = match self.st.shape().cloned() {
            None => (
                None,
                plain_object(&mut self.p.templates, &mut self.st, &mut values),
            ),
            Some(shape) => self.shaped_object(&shape, &row, &mut values)?,
        };
        self.p.spare_values.push(values);
        if !self.st.extras.is_empty() {
            self.add_extras(&row, &mut members)?;
        }
        self.p.leave();
        self.p.eager_off = eager_off;
        Ok((key, members))
    }

    /// A shaped row's object from its cells' values (taken), and its member key in a keyed
    /// map.
    fn shaped_object(
        &mut self,
        shape: &Shape<'de>,
        row: &Line<'de>,
        values: &mut [Option<Value>],
    ) -> Result<(Option<String>, Map<String, Value>)> {
        let key = if shape.keyed {
            match values[0].take() {
                Some(Value::String(key)) => Some(key),
                _ => {
                    return Err(row.error_at(
                        ErrorKind::InvalidKeyedMap,
                        self.st.cells.first().map_or(row.text, |c| c.token),
                        "a keyed-map row starts with its member key, a string (quote one that \
                         reads as another scalar)",
                    ))
                }
            }
        } else {
            None
        };
        let mut unkept = MemberTemplates::default();
        let (group, hints) = match self.st.shaped.as_deref_mut() {
            Some(shaped) => (
                shaped.group.as_ref().map(|g| &g.value),
                &mut shaped.templates,
            ),
            None => (None, &mut unkept),
        };
        let members = members_object(
            &mut self.p.templates,
            hints,
            &mut self.p.spare_values,
            &shape.members,
            values,
            group,
            true,
        );
        Ok((key, members))
    }

    /// Adds the current row's `>`-named attachments to its object.
    #[cold]
    #[inline(never)]
    fn add_extras(&mut self, row: &Line<'de>, members: &mut Map<String, Value>) -> Result<()> {
        let extras = std::mem::take(&mut self.st.extras);
        let mut access = RowAccess {
            p: &mut *self.p,
            st: &mut self.st,
            col: 0,
            value: None,
        };
        for (name, child) in &extras {
            let value = access
                .read_child(*child, None, Some(name), Direct)
                .map_err(|e| e.or_position(|| line_position(row)))?;
            vacant_slot(members, name.as_ref(), row)?.insert(value);
        }
        self.st.extras = extras;
        Ok(())
    }

    /// The rows of a table with a layout ([`Shape`]), as an array (`items`) or, for a keyed
    /// map, an object (`map`).
    fn build_shaped(
        &mut self,
        mut items: Option<&mut Vec<Value>>,
        mut map: Option<&mut Map<String, Value>>,
    ) -> Result<()> {
        loop {
            if matches!(self.st.count, Count::Known(n) if self.st.found >= n) {
                return Ok(());
            }
            let Some(line) = self.next_row_line()? else {
                return Ok(());
            };
            if let Some(map) = map.as_deref_mut() {
                if self.keyed_row(&line, map) {
                    continue;
                }
            }
            let (key, members) = if self.plain_shaped_row(&line)? {
                let shape = self.st.shape().cloned().unwrap_or_else(unreachable_shape);
                let mut values = std::mem::take(&mut self.p.row_values);
                let made = self.shaped_object(&shape, &line, &mut values);
                self.p.row_values = values;
                made?
            } else {
                self.general_object(line)?
            };
            match (key, map.as_deref_mut(), items.as_deref_mut()) {
                // Keys are unique (checked with the row).
                (Some(key), Some(map), _) => {
                    map.insert(key, Value::Object(members));
                }
                (_, _, Some(items)) => items.push(Value::Object(members)),
                _ => {}
            }
        }
    }

    /// A keyed-map row `@N key|cells` (its line peeked) of plain cells whose `^` markers are
    /// filled by `.field {}` bodies and plain inline arrays `.field [N]: values`, read with
    /// the member lines' code and put into `map`. The general reading (`general_object` and
    /// what it calls), run once per row between long runs of member lines, finds little of
    /// its code in the instruction cache each time. `false`, with nothing consumed and the
    /// table's state as it was, for any other row and for any error, which the general
    /// reading then reads (and reports).
    #[inline(never)]
    fn keyed_row(&mut self, line: &Line<'de>, map: &mut Map<String, Value>) -> bool {
        if self.p.eager_off || self.p.eager_attempt {
            return false;
        }
        let Some(shape) = self
            .st
            .shape()
            .filter(|s| s.keyed && s.group.is_none() && s.identity.is_none())
            .cloned()
        else {
            return false;
        };
        let start = self.p.lines.cursor();
        let (depth, found) = (self.p.depth, self.st.found);
        let mut values = self.p.spare_values.pop().unwrap_or_default();
        values.clear();
        let mut key = None;
        let read = self.try_keyed_row(line, &shape, &mut values, &mut key);
        if let Ok(Some((name, members))) = read {
            // (`shaped_object` gives a keyed row's key, a string.)
            if let Some(name) = name {
                map.insert(name, Value::Object(members));
            }
            self.p.spare_values.push(values);
            return true;
        }
        // Back to the row, peeked again, for the general reading.
        self.p.spare_values.push(values);
        if let (Some(key), Some(shaped)) = (key, self.st.shaped.as_mut()) {
            shaped.ids.remove(key);
        }
        self.p.lines.seek(start);
        // (The line was read before: no error now.)
        let _ = self.p.lines.has_next();
        self.p.depth = depth;
        self.st.found = found;
        false
    }

    /// [`RowSeq::keyed_row`]'s reading: the row's member key and object, `None` for a row it
    /// does not read (`key`: the member key once recorded as seen).
    #[inline(always)]
    fn try_keyed_row(
        &mut self,
        line: &Line<'de>,
        shape: &Shape<'de>,
        values: &mut Vec<Option<Value>>,
        key: &mut Option<&'de str>,
    ) -> Result<Option<RowObject>> {
        let text = line.text;
        let Some(rest) = text.strip_prefix('@') else {
            return Ok(None);
        };
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0
            || rest.as_bytes().get(digits) != Some(&b' ')
            || rest[..digits].parse::<u64>().ok() != Some(self.st.found)
        {
            return Ok(None);
        }
        let text = &rest[digits + 1..];
        if lex::has_byte(text.as_bytes(), b'"') {
            return Ok(None);
        }
        // The cells: the member key (a plain string), plain scalars, `~` and `^` markers (at
        // most 64, by a bit mask).
        let n = self.st.fields.len();
        if n > 64 {
            return Ok(None);
        }
        let mut markers = 0u64;
        let mut cells = lex::plain_cells(text, b'|');
        for c in 0..n {
            let Some(token) = cells.next() else {
                return Ok(None);
            };
            if c == 0 {
                if !plain_string(token) {
                    return Ok(None);
                }
                push_made(values, || Some(Value::String(token.to_owned())));
                continue;
            }
            match token {
                "~" => values.push(None),
                "^" if !shape.scalar_only[c] => {
                    markers |= 1 << c;
                    values.push(None);
                }
                _ => {
                    if !plain_scalar_to(token, To(|value| values.push(Some(value)))) {
                        return Ok(None);
                    }
                }
            }
        }
        if cells.next().is_some() {
            return Ok(None);
        }
        let first = lex::trim(text.split('|').next().unwrap_or(""));
        let Some(shaped) = self.st.shaped.as_mut() else {
            return Ok(None);
        };
        if !shaped.ids.insert(Cow::Borrowed(first)) {
            return Ok(None);
        }
        *key = Some(first);
        self.p.lines.advance();
        // The attachments, at the depth the general reading reads them at.
        let level = self.st.level;
        self.p.enter(line)?;
        while markers != 0 {
            // (Taken from `next_here` in registers: see `Parser::build_members`.)
            let before = self.p.lines.cursor();
            let lex::Next::Here(child) = self.p.lines.next_here(2 * level) else {
                break;
            };
            let Some(name) = child.text.strip_prefix('.') else {
                self.p.lines.unread(before, child);
                break;
            };
            let bare = lex::bare_key_len(name);
            if bare == 0 || name.as_bytes().get(bare) != Some(&b' ') {
                return Ok(None);
            }
            let Some(c) = self.st.fields.iter().position(|f| f == &name[..bare]) else {
                return Ok(None);
            };
            if markers & (1 << c) == 0 {
                return Ok(None);
            }
            // (As the general reading has it: one space after the name, trailing blanks.)
            let body = name[bare + 1..].trim_end_matches([' ', '\t']);
            if body == "{}" {
                // As `Parser::build_object` reads it, into its place in the row's values.
                self.p.enter(&child)?;
                let slot = &mut values[c];
                *slot = Some(Value::Object(Map::with_capacity(build::UNKNOWN_MEMBERS)));
                if let Some(Value::Object(object)) = slot {
                    self.p.build_members(level + 2, object)?;
                }
                self.p.leave();
            } else if body.starts_with('[') {
                match self.p.plain_inline_array(body) {
                    Some(items) => values[c] = Some(Value::Array(items)),
                    None => return Ok(None),
                }
            } else {
                return Ok(None);
            }
            markers &= !(1 << c);
        }
        self.p.leave();
        if markers != 0 {
            return Ok(None);
        }
        // Nothing else may follow at the rows' level or below (the general reading's
        // attachments, positional bodies, or errors).
        if self.p.lines.has_next()? {
            let next = self.p.lines.peeked();
            if next.indent > 2 * level || (next.indent == 2 * level && next.text.starts_with('.')) {
                return Ok(None);
            }
        }
        self.st.found += 1;
        self.p.check_elements(line, self.st.found)?;
        self.p.enter(line)?;
        self.p.check_nesting(line, shape.nesting)?;
        self.st.row = *line;
        self.st.row_has_id = true;
        self.st.after_row = self.p.lines.cursor();
        self.st.count_grouped_row();
        let made = self.shaped_object(shape, line, values)?;
        self.p.leave();
        Ok(Some(made))
    }

    /// [`RowSeq::plain_row`] for a table with a layout: the cells' values into the parser's
    /// `row_values` and the cells into the table's, the row consumed and checked.
    fn plain_shaped_row(&mut self, line: &Line<'de>) -> Result<bool> {
        let text = line.text;
        if text.starts_with('@')
            || lex::has_quote_or_marker(text.as_bytes())
            || self.p.depth + self.st.shape().map_or(0, |s| s.nesting) >= self.p.limits.max_depth
            || self.st.found >= self.p.limits.max_elements as u64
        {
            return Ok(false);
        }
        let n = self.st.fields.len();
        let values = &mut self.p.row_values;
        values.clear();
        self.st.cells.clear();
        let mut cells = lex::plain_cells(text, b'|');
        for _ in 0..n {
            let Some(token) = cells.next() else {
                return Ok(false);
            };
            if token == "~" {
                values.push(None);
                self.st.cells.push(Cell {
                    token,
                    kind: CellKind::Missing,
                });
                continue;
            }
            if !plain_scalar_to(token, To(|value| values.push(Some(value)))) {
                return Ok(false);
            }
            self.st.cells.push(Cell {
                token,
                kind: CellKind::Scalar,
            });
        }
        if cells.next().is_some() {
            return Ok(false);
        }
        let cursor = self.p.lines.cursor();
        self.p.lines.advance();
        if self.row_continues() {
            self.p.lines.seek(cursor);
            self.p.lines.has_next()?;
            return Ok(false);
        }
        self.st.row = *line;
        self.st.row_has_id = false;
        self.check_shaped_row(line, false, false)?;
        self.st.found += 1;
        self.st.count_grouped_row();
        Ok(true)
    }
}

#[cold]
fn unreachable_shape<'de>() -> Rc<Shape<'de>> {
    Rc::new(Shape {
        keyed: false,
        members: Members::default(),
        group: None,
        scalar_only: Vec::new(),
        identity: None,
        nesting: 0,
    })
}

/// A keyed map's member key twice (spec §7.2a.4); `token` is the key's cell.
#[cold]
fn duplicate_member(line: &Line<'_>, token: &str) -> Error {
    line.error_at(
        ErrorKind::DuplicateKey,
        token,
        format!("duplicate member key {token} in a keyed map"),
    )
}

/// A value-grouping sub-header `column=value [n]` (spec v3.6): its column, value token and
/// count; `None` for a line of another form.
fn sub_header<'de>(line: &Line<'de>) -> Result<Option<(Cow<'de, str>, &'de str, u64)>> {
    let text = line.text;
    if !text.ends_with(']') {
        return Ok(None);
    }
    let Ok((name, rest)) = lex::key(line, text, b"=") else {
        return Ok(None);
    };
    let Some(rest) = rest.strip_prefix('=') else {
        return Ok(None);
    };
    let Some(open) = rest.rfind(" [") else {
        return Ok(None);
    };
    let token = lex::trim(&rest[..open]);
    let bracket = &rest[open + 1..];
    let (count, tail) = lex::count(line, bracket)?;
    if !tail.is_empty() {
        return Ok(None);
    }
    let n = match count {
        Count::Known(0) | Count::Deferred => {
            return Err(line.error_at(
                ErrorKind::InvalidCount,
                bracket,
                "a group's sub-header counts its rows, at least one",
            ))
        }
        Count::Known(n) => n,
    };
    shape::check_constant(line, token)?;
    Ok(Some((name, token, n)))
}

/// The object of `members` from a row's cell values (taken), the group's value, and for the
/// flattened objects among them the rules of spec §7.4.6.2 (`top`: the members are a row's).
fn members_object(
    templates: &mut build::Templates,
    hints: &mut MemberTemplates,
    spare: &mut Vec<Vec<Option<Value>>>,
    members: &Members<'_>,
    values: &mut [Option<Value>],
    group: Option<&Value>,
    top: bool,
) -> Map<String, Value> {
    let mut out = spare.pop().unwrap_or_default();
    out.clear();
    for source in &members.sources {
        let value = match source {
            Member::Cell(c) => values[*c].take(),
            Member::Const { value, .. } => Some(value.clone()),
            Member::Group => group.cloned(),
            Member::Nested(nested) => match nested.state(top, |c| leaf(values[c].as_ref())) {
                Leaf::Absent => None,
                Leaf::Null => Some(Value::Null),
                Leaf::Value => Some(Value::Object(members_object(
                    templates,
                    hints,
                    spare,
                    &nested.members,
                    values,
                    group,
                    false,
                ))),
            },
        };
        out.push(value);
    }
    let object = match hints.of(members) {
        Some(hint) => templates.object_hinted(hint, &members.names, &mut out),
        None => templates.object(&members.names, &mut out),
    };
    spare.push(out);
    object
}

/// What a flattened leaf's value is, for [`shape::Nested::state`].
fn leaf(value: Option<&Value>) -> Leaf {
    match value {
        None => Leaf::Absent,
        Some(Value::Null) => Leaf::Null,
        Some(_) => Leaf::Value,
    }
}

impl<'de> RowSeq<'_, 'de> {
    /// After a fast path's row: whether the next line may belong to it (an indented line or
    /// an attachment), or is bad. Either way the general path reads the row again, and so
    /// reports errors in reading order (the row's own checks, such as a repeated identity,
    /// before a bad line under it).
    #[inline(always)]
    fn row_continues(&mut self) -> bool {
        match self.p.lines.has_next() {
            Ok(false) => false,
            Ok(true) => {
                let next = self.p.lines.peeked();
                next.level().map_or(true, |level| {
                    level > self.st.level || (level == self.st.level && next.text.starts_with('.'))
                })
            }
            Err(_) => true,
        }
    }

    /// Row `line` as an object, consumed, when it is plain: no `@N` id, no quotes, a cell
    /// for every field and each one a [`plain_scalar`], no attachment line after it, and room
    /// for one more level and element. `None` for any other row, which [`RowSeq::read_row`]
    /// reads (and reports the errors of); nothing is consumed then.
    #[inline]
    fn plain_row(&mut self, line: &Line<'de>, items: &mut Vec<Value>) -> Result<bool> {
        let text = line.text;
        let n = self.st.fields.len();
        if text.starts_with('@')
            || self.p.depth >= self.p.limits.max_depth
            || self.st.found >= self.p.limits.max_elements as u64
        {
            return Ok(false);
        }
        let values = &mut self.p.row_values;
        let read = if lex::has_quote_or_marker(text.as_bytes()) {
            quoted_row_values(values, n, line)
        } else {
            row_values(values, n, line, lex::plain_cells(text, b'|'))
        };
        if !read {
            return Ok(false);
        }
        // What follows the row must not be an attachment of it (which `read_row` reports).
        let cursor = self.p.lines.cursor();
        self.p.lines.advance();
        if self.row_continues() {
            // Back to the row, peeked again, for `read_row`.
            self.p.lines.seek(cursor);
            self.p.lines.has_next()?;
            return Ok(false);
        }
        self.st.found += 1;
        self.st.row = *line;
        self.st.row_has_id = false;
        let row = plain_object(&mut self.p.templates, &mut self.st, &mut self.p.row_values);
        items.push(Value::Object(row));
        Ok(true)
    }
}

/// The object of a row of table `st` (without a layout) from its cells' values (taken), with
/// the table's constant columns if it has them.
#[inline(always)]
fn plain_object<'de>(
    templates: &mut build::Templates,
    st: &mut Table<'de>,
    values: &mut Vec<Option<Value>>,
) -> Map<String, Value> {
    match st.consts.as_deref() {
        None => templates.object_hinted(&mut st.template, &st.fields, values),
        Some(consts) => {
            for (i, value) in &consts.values {
                values.insert(*i, Some(value.clone()));
            }
            templates.object_hinted(&mut st.template, &consts.names, values)
        }
    }
}

impl<'de> de::SeqAccess<'de> for RowSeq<'_, 'de> {
    type Error = Error;

    fn size_hint(&self) -> Option<usize> {
        remaining(self.st.count, self.st.found, self.p.lines.remaining_bytes())
    }

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        if matches!(self.st.count, Count::Known(n) if self.st.found >= n) {
            return Ok(None);
        }
        let Some(line) = self.next_row_line()? else {
            return Ok(None);
        };
        self.read_row(line, false)?;
        self.st.found += 1;
        self.p.check_elements(&line, self.st.found)?;
        seed.deserialize(RowDe {
            p: &mut *self.p,
            st: &mut self.st,
        })
        .map(Some)
    }
}

/// One tabular row as a map.
struct RowDe<'a, 'de> {
    p: &'a mut Parser<'de>,
    st: &'a mut Table<'de>,
}

impl<'de> de::Deserializer<'de> for RowDe<'_, 'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let line = self.st.row;
        if let Some(shape) = self.st.shape().cloned() {
            self.p.enter(&line)?;
            self.p.check_nesting(&line, shape.nesting)?;
            let mut access = ShapeAccess {
                row: RowAccess {
                    p: &mut *self.p,
                    st: &mut *self.st,
                    col: 0,
                    value: None,
                },
                shape,
                member: 0,
                value: None,
            };
            let value = match visitor.visit_map(&mut access) {
                Ok(value) => value,
                Err(e) => {
                    drop(access);
                    let e = earlier_cell_error(self.p.spec, &line, &self.st.cells, e);
                    return Err(e.or_position(|| line_position(&line)));
                }
            };
            if access.value.is_some() || de::MapAccess::next_key_seed(&mut access, SKIP)?.is_some()
            {
                return Err(line.error(
                    ErrorKind::TypeMismatch,
                    "the row has more fields than the target type reads",
                ));
            }
            self.p.leave();
            return Ok(value);
        }
        self.p.enter(&line)?;
        let mut access = RowAccess {
            p: &mut *self.p,
            st: &mut *self.st,
            col: 0,
            value: None,
        };
        let value = visitor
            .visit_map(&mut access)
            .map_err(|e| e.or_position(|| line_position(&line)))?;
        if access.value.is_some() || de::MapAccess::next_key_seed(&mut access, SKIP)?.is_some() {
            return Err(line.error(
                ErrorKind::TypeMismatch,
                "the row has more fields than the target type reads",
            ));
        }
        self.p.leave();
        Ok(value)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

struct RowAccess<'a, 'de> {
    p: &'a mut Parser<'de>,
    st: &'a mut Table<'de>,
    col: usize,
    value: Option<usize>,
}

/// The members of a row without a layout: its present cells in order, then its `>`-named
/// attachments (`col` past the cells counts those).
impl<'de> de::MapAccess<'de> for RowAccess<'_, 'de> {
    type Error = Error;

    fn size_hint(&self) -> Option<usize> {
        let rest = self.st.cells.get(self.col..).unwrap_or_default();
        let extras = self.st.extras.len() + self.st.cells.len() - self.col.min(self.st.cells.len());
        let extras = extras.saturating_sub(rest.len());
        Some(rest.iter().filter(|c| c.kind != CellKind::Missing).count() + extras)
    }

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        if let Some(c) = self.value.take() {
            self.value_at(c, SKIP)?;
        }
        let n = self.st.cells.len();
        while self.col < n {
            let c = self.col;
            self.col += 1;
            if self.st.cells[c].kind == CellKind::Missing {
                continue;
            }
            self.value = Some(c);
            return seed.deserialize(KeyDe::of(&self.st.fields[c])).map(Some);
        }
        if let Some((name, _)) = self.st.extras.get(self.col - n) {
            let key = KeyDe::of(name);
            self.value = Some(self.col);
            self.col += 1;
            return seed.deserialize(key).map(Some);
        }
        Ok(None)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let c = self.value.take().ok_or_else(|| {
            Error::new(
                ErrorKind::TypeMismatch,
                "a value was requested before its key",
            )
        })?;
        self.value_at(c, seed)
    }
}

/// The members of a row with a layout ([`Shape`]) in order, then its `>`-named attachments.
struct ShapeAccess<'a, 'de> {
    row: RowAccess<'a, 'de>,
    shape: Rc<Shape<'de>>,
    /// The next member; past the members, the next attachment.
    member: usize,
    /// The member (or attachment) whose value is next.
    value: Option<usize>,
}

/// The first bad scalar cell of `line` before the place of `error` (anywhere on the line
/// when `error` is on a later line, an attachment's), if any, else `error`.
///
/// A row with a layout is visited in member order, which is not its column order when it
/// has flattened objects (`loc>zip,id,loc>city` visits `loc` first). So that both decoders
/// report the same place, such a row's errors follow one rule: its scalar cells in column
/// order first, then its attachments (which sit in columns without flattening, so member
/// order reads them in column order); the `Value` builder reads such a row that way, and an
/// error of the serde path is replaced by the first cell that fails on its own.
#[cold]
#[inline(never)]
fn earlier_cell_error<'de>(
    spec: Spec,
    line: &Line<'de>,
    cells: &[Cell<'de>],
    error: Error,
) -> Error {
    let Some(at) = error.position().filter(|p| p.line >= line.number as u64) else {
        return error;
    };
    for cell in cells.iter().filter(|c| c.kind == CellKind::Scalar) {
        if at.line == line.number as u64 && line.position_of(cell.token).column >= at.column {
            break;
        }
        if let Err(e) = visit_scalar(spec, line, cell.token, IgnoredAny) {
            return e;
        }
    }
    error
}

/// What a cell holds, for the rules on flattened objects.
fn cell_leaf(cell: &Cell<'_>) -> Leaf {
    match (cell.kind, cell.token) {
        (CellKind::Missing, _) => Leaf::Absent,
        (_, "-") => Leaf::Null,
        _ => Leaf::Value,
    }
}

impl<'de> ShapeAccess<'_, 'de> {
    fn value_of<V: DeserializeSeed<'de>>(&mut self, i: usize, seed: V) -> Result<V::Value> {
        let shape = Rc::clone(&self.shape);
        let n = shape.members.sources.len();
        if i >= n {
            let (name, child) = self.row.st.extras[i - n].clone();
            return self.row.read_child(child, None, Some(&name), Seed(seed));
        }
        let spec = self.row.p.spec;
        match &shape.members.sources[i] {
            Member::Cell(c) => self.row.read_at(*c, Seed(seed)),
            member @ Member::Const { .. } => {
                let (line, token) = member.const_token(&self.row.st.line, self.row.st.at);
                seed.deserialize(ScalarDe {
                    spec,
                    line: &line,
                    token,
                })
            }
            Member::Group => match self.row.st.group() {
                Some(group) => seed.deserialize(ScalarDe {
                    spec,
                    line: &group.line,
                    token: group.token,
                }),
                None => Err(self.row.st.row.error(
                    ErrorKind::InvalidGroupHeader,
                    "a grouped row before its group",
                )),
            },
            Member::Nested(nested) => seed.deserialize(NestedDe {
                nested,
                st: &*self.row.st,
                spec,
                top: true,
            }),
        }
    }
}

impl<'de> de::MapAccess<'de> for ShapeAccess<'_, 'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        if let Some(i) = self.value.take() {
            self.value_of(i, SKIP)?;
        }
        let shape = Rc::clone(&self.shape);
        let n = shape.members.sources.len();
        while self.member < n {
            let i = self.member;
            self.member += 1;
            let cells = &self.row.st.cells;
            let present = match &shape.members.sources[i] {
                Member::Cell(c) => cells[*c].kind != CellKind::Missing,
                Member::Const { .. } | Member::Group => true,
                Member::Nested(nested) => {
                    nested.state(true, |c| cell_leaf(&cells[c])) != Leaf::Absent
                }
            };
            if present {
                self.value = Some(i);
                return seed
                    .deserialize(KeyDe::of(&shape.members.names[i]))
                    .map(Some);
            }
        }
        if let Some((name, _)) = self.row.st.extras.get(self.member - n) {
            let key = KeyDe::of(name);
            self.value = Some(self.member);
            self.member += 1;
            return seed.deserialize(key).map(Some);
        }
        Ok(None)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let i = self.value.take().ok_or_else(|| {
            Error::new(
                ErrorKind::TypeMismatch,
                "a value was requested before its key",
            )
        })?;
        self.value_of(i, seed)
    }
}

/// A flattened object (spec §7.4.6) of a row: `null` when every leaf is `-` at the top level,
/// else the map of its present leaves.
struct NestedDe<'a, 'de> {
    nested: &'a shape::Nested<'de>,
    st: &'a Table<'de>,
    spec: Spec,
    top: bool,
}

impl<'a, 'de> NestedDe<'a, 'de> {
    fn is_null(&self) -> bool {
        let cells = &self.st.cells;
        self.nested.state(self.top, |c| cell_leaf(&cells[c])) == Leaf::Null
    }
}

impl<'de> de::Deserializer<'de> for NestedDe<'_, 'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.is_null() {
            return visitor.visit_unit();
        }
        visitor.visit_map(NestedAccess {
            members: &self.nested.members,
            st: self.st,
            spec: self.spec,
            next: 0,
            value: None,
        })
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.is_null() {
            return visitor.visit_none();
        }
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    /// An externally tagged variant written flattened (`state>Held>reason`): the object's
    /// one present member is the variant.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        if self.is_null() {
            return self.deserialize_any(visitor);
        }
        visitor.visit_enum(NestedEnum(NestedAccess {
            members: &self.nested.members,
            st: self.st,
            spec: self.spec,
            next: 0,
            value: None,
        }))
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

/// A flattened object read as an enum: its one present member, the variant.
struct NestedEnum<'a, 'de>(NestedAccess<'a, 'de>);

impl<'de> NestedEnum<'_, 'de> {
    /// The variant's value as `read` reads it; no member may follow it.
    fn only<T>(mut self, read: impl FnOnce(&mut NestedAccess<'_, 'de>) -> Result<T>) -> Result<T> {
        let value = read(&mut self.0)?;
        if de::MapAccess::next_key_seed(&mut self.0, SKIP)?.is_some() {
            return Err(self.0.st.row.error(
                ErrorKind::TypeMismatch,
                "an enum variant is an object with exactly one member",
            ));
        }
        Ok(value)
    }
}

impl<'de> de::EnumAccess<'de> for NestedEnum<'_, 'de> {
    type Error = Error;
    type Variant = Self;

    fn variant_seed<S: DeserializeSeed<'de>>(mut self, seed: S) -> Result<(S::Value, Self)> {
        match de::MapAccess::next_key_seed(&mut self.0, seed)? {
            Some(variant) => Ok((variant, self)),
            None => Err(self.0.st.row.error(
                ErrorKind::TypeMismatch,
                "an enum variant is a string or an object with exactly one member",
            )),
        }
    }
}

impl<'de> de::VariantAccess<'de> for NestedEnum<'_, 'de> {
    type Error = Error;

    fn unit_variant(self) -> Result<()> {
        self.only(|a| de::MapAccess::next_value_seed(a, PhantomData::<()>))
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value> {
        self.only(|a| de::MapAccess::next_value_seed(a, seed))
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value> {
        self.only(|a| de::MapAccess::next_value_seed(a, AsSeq(visitor)))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        self.only(|a| de::MapAccess::next_value_seed(a, AsMap(visitor)))
    }
}

/// A visitor as a seed that reads a sequence.
pub(crate) struct AsSeq<V>(pub(crate) V);

impl<'de, V: Visitor<'de>> DeserializeSeed<'de> for AsSeq<V> {
    type Value = V::Value;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<V::Value, D::Error> {
        d.deserialize_seq(self.0)
    }
}

/// A visitor as a seed that reads a map.
pub(crate) struct AsMap<V>(pub(crate) V);

impl<'de, V: Visitor<'de>> DeserializeSeed<'de> for AsMap<V> {
    type Value = V::Value;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<V::Value, D::Error> {
        d.deserialize_map(self.0)
    }
}

/// The present members of a flattened object: leaf cells and the objects beneath it.
struct NestedAccess<'a, 'de> {
    members: &'a Members<'de>,
    st: &'a Table<'de>,
    spec: Spec,
    next: usize,
    value: Option<usize>,
}

impl<'de> de::MapAccess<'de> for NestedAccess<'_, 'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        let cells = &self.st.cells;
        while self.next < self.members.sources.len() {
            let i = self.next;
            self.next += 1;
            let present = match &self.members.sources[i] {
                Member::Cell(c) => cells[*c].kind != CellKind::Missing,
                Member::Nested(nested) => {
                    nested.state(false, |c| cell_leaf(&cells[c])) != Leaf::Absent
                }
                Member::Const { .. } | Member::Group => true,
            };
            if present {
                self.value = Some(i);
                return seed
                    .deserialize(KeyDe::of(&self.members.names[i]))
                    .map(Some);
            }
        }
        Ok(None)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let i = self.value.take().ok_or_else(|| {
            Error::new(
                ErrorKind::TypeMismatch,
                "a value was requested before its key",
            )
        })?;
        match &self.members.sources[i] {
            Member::Cell(c) => seed.deserialize(ScalarDe {
                spec: self.spec,
                line: &self.st.row,
                token: self.st.cells[*c].token,
            }),
            Member::Nested(nested) => seed.deserialize(NestedDe {
                nested,
                st: self.st,
                spec: self.spec,
                top: false,
            }),
            member @ Member::Const { .. } => {
                let (line, token) = member.const_token(&self.st.line, self.st.at);
                seed.deserialize(ScalarDe {
                    spec: self.spec,
                    line: &line,
                    token,
                })
            }
            Member::Group => Err(self.st.row.error(
                ErrorKind::InvalidGroupHeader,
                "a group column inside a flattened object",
            )),
        }
    }
}

/// The rows of a keyed map (spec §7.2a) as an object: each row's member key and its object.
struct KeyedAccess<'s, 'a, 'de> {
    seq: &'s mut RowSeq<'a, 'de>,
    /// A row whose key was read and whose object was not.
    row: bool,
}

impl<'de> KeyedAccess<'_, '_, 'de> {
    /// After the visitor: it must have read every member.
    fn end(&mut self) -> Result<()> {
        if self.row || de::MapAccess::next_key_seed(self, SKIP)?.is_some() {
            return Err(self.seq.st.row.error(
                ErrorKind::TypeMismatch,
                "the object has more members than the target type reads",
            ));
        }
        Ok(())
    }
}

impl<'de> de::MapAccess<'de> for KeyedAccess<'_, '_, 'de> {
    type Error = Error;

    fn size_hint(&self) -> Option<usize> {
        remaining(
            self.seq.st.count,
            self.seq.st.found,
            self.seq.p.lines.remaining_bytes(),
        )
    }

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        if self.row {
            self.row = false;
            de::Deserializer::deserialize_ignored_any(
                RowDe {
                    p: &mut *self.seq.p,
                    st: &mut self.seq.st,
                },
                IgnoredAny,
            )?;
        }
        if matches!(self.seq.st.count, Count::Known(n) if self.seq.st.found >= n) {
            return Ok(None);
        }
        let Some(line) = self.seq.next_row_line()? else {
            return Ok(None);
        };
        self.seq.read_row(line, false)?;
        self.seq.st.found += 1;
        self.seq.p.check_elements(&line, self.seq.st.found)?;
        // A string (checked with the row).
        let Scalar::Str(key) = lex::scalar(&line, self.seq.st.cells[0].token)? else {
            return Err(line.error(ErrorKind::InvalidKeyedMap, "a member key is a string"));
        };
        self.row = true;
        seed.deserialize(KeyDe::of(&key))
            .map(Some)
            .map_err(|e| e.or_position(|| line_position(&line)))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        if !self.row {
            return Err(Error::new(
                ErrorKind::TypeMismatch,
                "a value was requested before its key",
            ));
        }
        self.row = false;
        seed.deserialize(RowDe {
            p: &mut *self.seq.p,
            st: &mut self.seq.st,
        })
    }
}

/// What reads a value: a serde seed through the deserializer, or [`Parser::build`].
trait Read<'de> {
    type Out;
    fn scalar(self, scalar: ScalarDe<'_, 'de>) -> Result<Self::Out>;
    fn pending(self, p: &mut Parser<'de>, pending: Pending<'de>) -> Result<Self::Out>;
}

/// A seed reads through the deserializer.
struct Seed<V>(V);

impl<'de, V: DeserializeSeed<'de>> Read<'de> for Seed<V> {
    type Out = V::Value;
    fn scalar(self, scalar: ScalarDe<'_, 'de>) -> Result<V::Value> {
        self.0.deserialize(scalar)
    }
    fn pending(self, p: &mut Parser<'de>, pending: Pending<'de>) -> Result<V::Value> {
        self.0.deserialize(ValueDe { p, pending })
    }
}

/// A `serde_json::Value` built directly.
struct Direct;

impl<'de> Read<'de> for Direct {
    type Out = Value;
    fn scalar(self, scalar: ScalarDe<'_, 'de>) -> Result<Value> {
        scalar_value(scalar.spec, scalar.line, scalar.token)
    }
    fn pending(self, p: &mut Parser<'de>, pending: Pending<'de>) -> Result<Value> {
        p.build(pending)
    }
}

impl<'de> RowAccess<'_, 'de> {
    /// The value of attachment cell `c` as the `Value` builder makes it: as the eager
    /// reading kept it, else read now.
    fn attachment(&mut self, c: usize) -> Result<Value> {
        match self.st.built.get_mut(c).and_then(Option::take) {
            Some(value) => Ok(value),
            None => self.read_at(c, Direct),
        }
    }

    /// The value of cell `c`, or past the cells of the row's `>`-named attachment.
    fn value_at<V: DeserializeSeed<'de>>(&mut self, c: usize, seed: V) -> Result<V::Value> {
        let n = self.st.cells.len();
        if c >= n {
            let (name, child) = self.st.extras[c - n].clone();
            return self.read_child(child, None, Some(&name), Seed(seed));
        }
        self.read_at(c, Seed(seed))
    }

    /// The value of cell `c`: a scalar, or its attachment's body.
    fn read_at<R: Read<'de>>(&mut self, c: usize, read: R) -> Result<R::Out> {
        let st = &mut *self.st;
        let cell = st.cells[c];
        if cell.kind == CellKind::Scalar {
            return read.scalar(ScalarDe {
                spec: self.p.spec,
                line: &st.row,
                token: cell.token,
            });
        }
        let row = st.row;
        match st.children.get(c).copied().flatten() {
            Some(child) => self.read_child(child, Some(c), None, read),
            None => Err(row.error_at(
                ErrorKind::MissingAttachment,
                cell.token,
                "attachment marker without a body",
            )),
        }
    }

    /// The value of an attachment body: of column `c`'s marker, or (`None`) the `>`-named
    /// member `extra`'s, which may also be a scalar `.name =value`.
    #[inline(always)]
    fn read_child<R: Read<'de>>(
        &mut self,
        child: Child<'de>,
        c: Option<usize>,
        extra: Option<&Cow<'de, str>>,
        read: R,
    ) -> Result<R::Out> {
        let st = &mut *self.st;
        match child {
            Child::Positional(line) => {
                let fields = c
                    .and_then(|c| st.inline_schema(c).cloned())
                    .ok_or_else(|| {
                        line.error(ErrorKind::OrphanInlineAttachment, "no inline schema")
                    })?;
                read.pending(&mut *self.p, Pending::InlineObject { line, fields })
            }
            Child::Traditional {
                line,
                rest,
                cursor,
                end,
            } => {
                let resume = self.p.lines.cursor();
                self.p.lines.seek(cursor);
                let value = self.body(line, rest, c, extra, read, Some(end))?;
                self.p.lines.seek(resume);
                Ok(value)
            }
            Child::Built => Err(st.row.error(
                ErrorKind::InvalidLine,
                "an attachment read twice (a bug: please report it)",
            )),
        }
    }

    /// The value of the `.field` attachment `line` (`rest` after its name) whose body starts
    /// at the reader's position, which ends after it. With `end` (the body's extent found by
    /// [`traditional`]) the reading must stop at that line; without it, at the first line
    /// less indented than a body.
    fn body<R: Read<'de>>(
        &mut self,
        line: Line<'de>,
        rest: &'de str,
        c: Option<usize>,
        extra: Option<&Cow<'de, str>>,
        read: R,
        end: Option<Option<usize>>,
    ) -> Result<R::Out> {
        let st = &mut *self.st;
        let level = st.level + 2;
        let trimmed = rest.trim_end_matches([' ', '\t']);
        // `.field [N]` without `{fields}` uses the column's shared schema; but an
        // expanded array has no other spelling, so a body of `@N` items is expanded
        // (the rule the reference decoders apply; shared-schema rows never carry `@N`).
        let shared = match self.p.lines.peek()? {
            Some(first) if first.text.starts_with('@') => None,
            _ => match (c, extra) {
                (Some(c), _) => st.shared_schema(c),
                (None, Some(name)) => st
                    .extra_shared
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, schema)| schema),
                (None, None) => None,
            },
        };
        let pending = if trimmed == "{}" {
            Pending::Object { line, level }
        } else if trimmed.starts_with('[') {
            let pending = self.p.array_header(line, trimmed, level, shared)?;
            // A tabular array's declaration establishes the field's shared schema
            // (spec §7.4.5.3); a keyed map is an object and establishes none.
            let tabular = match &pending {
                Pending::Array {
                    body: Body::Rows { fields, shape, .. },
                    ..
                } if !shape.as_ref().is_some_and(|s| s.keyed) => Some((fields, shape)),
                _ => None,
            };
            if let Some((fields, shape)) = tabular {
                let schema = (Rc::clone(fields), shape.clone());
                match (c, extra) {
                    (Some(c), _) => {
                        if st.shared_schema(c).is_none() {
                            let n = st.fields.len();
                            Table::set(&mut st.shared, n, c, schema);
                        }
                    }
                    (None, Some(name)) => {
                        if !st.extra_shared.iter().any(|(n, _)| n == name) {
                            st.extra_shared.push((name.clone(), schema));
                        }
                    }
                    (None, None) => {}
                }
            }
            pending
        } else if let Some(token) = trimmed.strip_prefix('=').filter(|_| c.is_none()) {
            // A scalar member whose name contains `>` (spec §7.4.6.1.4).
            Pending::Scalar {
                line,
                token: lex::trim(token),
            }
        } else {
            return Err(line.error_at(
                ErrorKind::InvalidLine,
                rest,
                "an attachment is `.field {}` or `.field [N]...`",
            ));
        };
        let counted = matches!(pending, Pending::Array { .. });
        let value = read.pending(&mut *self.p, pending)?;
        let next = self.p.lines.peek()?;
        let overrun = match (end, next) {
            (Some(end), next) => next.filter(|l| Some(l.number) != end),
            (None, Some(next)) if next.level()? >= level => Some(next),
            (None, _) => None,
        };
        if let Some(next) = overrun {
            return Err(next.error(
                if counted {
                    ErrorKind::CountMismatch
                } else {
                    ErrorKind::InvalidIndent
                },
                if counted {
                    "more items than the attachment's declared count"
                } else {
                    "unexpected line in an attachment body"
                },
            ));
        }
        Ok(value)
    }
}

// ---------------------------------------------------------------------------------------------
// Positional inline objects

struct InlineObjectAccess<'de> {
    spec: Spec,
    line: Line<'de>,
    fields: Fields<'de>,
    values: lex::Cells<'de>,
    index: usize,
    value: Option<&'de str>,
}

impl<'de> InlineObjectAccess<'de> {
    fn new(spec: Spec, line: Line<'de>, fields: Fields<'de>) -> Result<Self> {
        let found = lex::count_cells(line.text, b'|');
        if found != fields.len() {
            return Err(line.error(
                ErrorKind::InlineWidthMismatch,
                format!(
                    "inline body has {found} values but its schema declares {} fields",
                    fields.len()
                ),
            ));
        }
        Ok(InlineObjectAccess {
            spec,
            line,
            fields,
            values: lex::cells(line.text, b'|'),
            index: 0,
            value: None,
        })
    }

    fn end(&mut self, line: &Line<'de>) -> Result<()> {
        if self.value.is_some() || self.index < self.fields.len() {
            return Err(line.error(
                ErrorKind::TypeMismatch,
                "the object has more members than the target type reads",
            ));
        }
        Ok(())
    }
}

impl<'de> de::MapAccess<'de> for InlineObjectAccess<'de> {
    type Error = Error;

    fn size_hint(&self) -> Option<usize> {
        Some(self.fields.len().saturating_sub(self.index))
    }

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        if let Some(token) = self.value.take() {
            // Validate a skipped value.
            lex::scalar(&self.line, token)?;
        }
        if self.index >= self.fields.len() {
            return Ok(None);
        }
        self.value = Some(self.values.next().unwrap_or(""));
        let key = KeyDe::of(&self.fields[self.index]);
        self.index += 1;
        seed.deserialize(key).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let token = self.value.take().ok_or_else(|| {
            Error::new(
                ErrorKind::TypeMismatch,
                "a value was requested before its key",
            )
        })?;
        seed.deserialize(ScalarDe {
            spec: self.spec,
            line: &self.line,
            token,
        })
    }
}

/// A keyed map's zero count `[0:]` at `bracket`: refused before its field declaration is read.
#[cold]
pub(crate) fn zero_keyed_count(line: &Line<'_>, bracket: &str) -> Error {
    line.error_at(
        ErrorKind::InvalidCount,
        bracket,
        "a keyed map `[0:]` has a zero count: an empty object is written without members, \
         never as a keyed map (spec §7.2a.4)",
    )
}
