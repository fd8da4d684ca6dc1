//! Documents in the current spec's table layouts, built from arbitrary bytes, for the
//! `gcf_layouts` fuzz target: flattened `a>b` columns, keyed maps `[N:]` / `[?:]`, constant
//! columns `name=value`, identity columns `@id`, value-grouping (`group=` and its
//! `kind=value [N]` sub-headers), attachments (`^`, `^{...}`, `.f [N]{...}`, `."a>b" =v`) and
//! deferred counts with their summaries.
//!
//! Random bytes almost never spell a valid table header, so a byte-level fuzzer spends its
//! time on the header line; here the bytes choose among the grammar's productions instead
//! (each byte a choice, zero when they run out), so most documents are well formed or broken
//! in one place, and the decoder's deep paths (row layouts, sub-headers, attachments under
//! flattened rows) are reached. Every document goes through [`crate::gcf::check_bytes`].

/// A reader of choices from the fuzzer's bytes: each call takes one byte (zero past the end).
struct Choices<'a> {
    data: &'a [u8],
    at: usize,
}

impl Choices<'_> {
    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }

    /// A number below `n` (n > 0).
    fn below(&mut self, n: usize) -> usize {
        usize::from(self.byte()) % n
    }

    fn pick<'s>(&mut self, items: &[&'s str]) -> &'s str {
        items[self.below(items.len())]
    }

    /// True one time in `n` (false past the end of the bytes).
    fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == n - 1
    }

    fn exhausted(&self) -> bool {
        self.at >= self.data.len()
    }
}

/// Plain column names (the first few are reused as sub-objects' and groups' names).
const NAMES: &[&str] = &["id", "kind", "name", "a", "b", "\"x y\"", "\"\"", "n"];
/// Flattened path columns, and names a decoder must take literally (empty segments).
const PATHS: &[&str] = &[
    "\"a>b\"",
    "\"a>c\"",
    "\"a>b>c\"",
    "\"loc>city\"",
    "\"loc>zip\"",
    "\">\"",
    "\"a>\"",
    "\">b\"",
    "\"a>>b\"",
    "\"id>x\"",
];
/// Constant columns' values; the last few are rejected.
const CONSTANTS: &[&str] = &[
    "1",
    "ok",
    "-",
    "\"q\"",
    "true",
    "2.5",
    "-0",
    "~",
    "^",
    "",
    "9223372036854775808",
];
/// Cells a row may hold anywhere.
const CELLS: &[&str] = &[
    "1", "x", "-", "~", "^", "^{a,b}", "\"s\"", "\"a|b\"", "true", "2.5", "é", "a,b",
];
/// Cells at the edges: of the int64 domain, of the number grammar, of the markers.
const EDGE_CELLS: &[&str] = &[
    "^{}",
    "-0",
    "1e400",
    "9223372036854775807",
    "-9223372036854775809",
    "0.00001",
    "",
    "^{a",
    "\"open",
];

/// A cell: mostly an ordinary one, one time in eight an edge.
fn cell(c: &mut Choices<'_>) -> String {
    if c.one_in(8) {
        c.pick(EDGE_CELLS).to_owned()
    } else {
        c.pick(CELLS).to_owned()
    }
}

/// A constant's value: mostly one a constant may have, one time in eight one it may not.
fn constant(c: &mut Choices<'_>) -> &'static str {
    if c.one_in(8) {
        CONSTANTS[7 + c.below(CONSTANTS.len() - 7)]
    } else {
        CONSTANTS[c.below(7)]
    }
}

/// The current-spec document `data` chooses (see the module docs).
pub fn document(data: &[u8]) -> String {
    let mut c = Choices { data, at: 0 };
    let mut out = String::from("GCF profile=generic");
    let key = c.one_in(4);
    if key {
        out.push_str(c.pick(&[" key=id", " pack_root=sha256:x key=id"]));
    } else if c.one_in(8) {
        out.push_str(" tool=t");
    }
    out.push('\n');
    let title = c.one_in(4);
    if title {
        out.push_str("title=t\n");
    }
    let sections = 1 + c.below(3);
    for s in 0..sections {
        let root = s == 0 && sections == 1 && !title;
        table(&mut c, &mut out, 0, root, key);
        if c.exhausted() {
            break;
        }
    }
    // A few raw lines from the rest of the bytes: breakage after a valid prefix.
    if !c.exhausted() && c.one_in(4) {
        let rest = &data[c.at.min(data.len())..];
        out.push_str(&String::from_utf8_lossy(&rest[..rest.len().min(64)]));
        out.push('\n');
    }
    out
}

/// One table at `depth` (0: a section `## name [N]{...}`; deeper: an attachment's body).
///
/// `root`: it may be the document's one anonymous table; `key`: the header has `key=id`.
fn table(c: &mut Choices<'_>, out: &mut String, depth: usize, root: bool, key: bool) {
    let indent = "  ".repeat(depth);
    let keyed = c.one_in(3);
    // Value-grouping and identity columns go together (a `group=` clause needs `@id`, and
    // `@id` needs it or the header's `key=id`), but for rare exceptions.
    let grouped = !keyed && depth == 0 && c.one_in(3);
    let deferred = c.one_in(5);
    let rows = 1 + c.below(3) + usize::from(c.one_in(8)) * 2;
    // The declaration: an identity or key column first, then plain, path and constant columns.
    let mut fields: Vec<String> = Vec::new();
    let mut cells: Vec<&str> = Vec::new();
    if keyed {
        fields.push(c.pick(&["key", "_key", "id"]).to_owned());
        cells.push("key");
    } else if (grouped || (key && depth == 0)) != c.one_in(32) {
        fields.push("@id".to_owned());
        cells.push("id");
    }
    let mut group = None;
    let name_of = |decl: &str| {
        decl.split('=')
            .next()
            .unwrap_or("")
            .trim_start_matches('@')
            .to_owned()
    };
    for _ in 0..1 + c.below(4) {
        // (declaration, its cell's name if rows carry it, whether it is the group column)
        let (decl, cell, grouping) = match c.below(6) {
            0 | 1 => {
                let name = c.pick(NAMES);
                (name.to_owned(), Some(name), false)
            }
            2 | 3 => {
                let path = c.pick(PATHS);
                (path.to_owned(), Some(path), false)
            }
            4 => (format!("{}={}", c.pick(NAMES), constant(c)), None, false),
            _ if group.is_none() && grouped => {
                let name = c.pick(&["kind", "name", "a"]);
                (name.to_owned(), None, true)
            }
            _ => continue,
        };
        // Names are distinct, but for a rare duplicate (`duplicate_field_name`).
        let name = name_of(&decl);
        if fields.iter().any(|f| name_of(f) == name) && !c.one_in(32) {
            continue;
        }
        fields.push(decl);
        cells.extend(cell);
        if grouping {
            group = Some(name);
        }
    }
    if grouped && group.is_none() {
        let name = ["kind", "name", "a"]
            .into_iter()
            .find(|g| !fields.iter().any(|f| name_of(f) == *g));
        if let Some(name) = name {
            fields.push(name.to_owned());
            group = Some(name.to_owned());
        }
    }
    if depth == 0 {
        out.push_str("## ");
        if !root || c.one_in(2) {
            out.push_str(c.pick(&["items", "servers", "\"a b\""]));
            out.push(' ');
        }
    }
    let count = if deferred {
        "?".to_owned()
    } else {
        (rows + usize::from(c.one_in(16))).to_string()
    };
    out.push('[');
    out.push_str(&count);
    if keyed {
        out.push(':');
    }
    out.push_str("]{");
    out.push_str(&fields.join(","));
    out.push('}');
    if let Some(name) = &group {
        out.push_str(" group=");
        out.push_str(name);
    }
    out.push('\n');
    let first = if keyed {
        First::Key
    } else if fields.first().is_some_and(|f| f == "@id") {
        First::Identity
    } else {
        First::Cell
    };
    // The group column's value is in the sub-headers, not the rows.
    let width = cells.len();
    let mut written = 0;
    let mut groups = 0;
    while written < rows {
        if let Some(name) = &group {
            let n = (1 + c.below(2)).min(rows - written);
            // Each group's value differs from the others', but for a rare repeat.
            let value = ["f", "\"m\"", "-", "1", "true"][(groups + usize::from(c.one_in(16))) % 5];
            groups += 1;
            out.push_str(&format!("{name}={value} [{n}]\n"));
            for _ in 0..n {
                row(c, out, &indent, depth, width, written, first);
                written += 1;
            }
        } else {
            row(c, out, &indent, depth, width, written, first);
            written += 1;
        }
    }
    if deferred && depth == 0 {
        out.push_str(&format!("##! summary counts={written}\n"));
    }
}

/// One row of `width` cells, with its attachments.
/// What a row's first cell is.
#[derive(Clone, Copy, PartialEq)]
enum First {
    /// A keyed map's member key.
    Key,
    /// An identity column's value (`@id`).
    Identity,
    /// A cell like the others.
    Cell,
}

fn row(
    c: &mut Choices<'_>,
    out: &mut String,
    indent: &str,
    depth: usize,
    width: usize,
    index: usize,
    first: First,
) {
    let mut line: Vec<String> = Vec::with_capacity(width);
    let mut attached = Vec::new();
    for i in 0..width.max(1) {
        // A member key or identity differs from the other rows', but for a rare repeat or a
        // value that cannot be one.
        let unique = match c.below(16) {
            15 => String::from("k0"),
            14 => cell(c),
            _ => index.to_string(),
        };
        let cell = if i == 0 && first == First::Key {
            match c.below(4) {
                0 => format!("\"{unique}\""),
                1 => format!("a>{unique}"),
                _ => format!("k{unique}"),
            }
        } else if i == 0 && first == First::Identity {
            unique
        } else {
            cell(c)
        };
        if cell.starts_with('^') {
            attached.push((i, cell.clone()));
        }
        line.push(cell);
    }
    if c.one_in(12) {
        line.push(cell(c));
    }
    out.push_str(indent);
    let extra = depth < 2 && c.one_in(5);
    if !attached.is_empty() || extra {
        out.push_str(&format!("@{index} "));
    }
    out.push_str(&line.join("|"));
    out.push('\n');
    for (i, marker) in attached {
        let name = ["a", "b", "x"][i % 3];
        if marker == "^" {
            attachment(c, out, indent, depth, name);
        } else {
            // `^{a,b}` / `^{}`: an inline schema's body, one level deeper.
            out.push_str(&format!("{indent}  {}\n", c.pick(&["1|2", "x", "-|~", ""])));
        }
    }
    if extra {
        out.push_str(&format!(
            "{indent}.\"{}\" {}\n",
            c.pick(&["a>b", "x>", ">"]),
            c.pick(&["=v", "=1", "{}", "=~", "[1]: a"])
        ));
    }
}

/// A traditional attachment `.name ...` of a row at `depth`.
fn attachment(c: &mut Choices<'_>, out: &mut String, indent: &str, depth: usize, name: &str) {
    out.push_str(&format!("{indent}.{name} "));
    match c.below(4) {
        0 if depth < 2 => table(c, out, depth + 1, false, false),
        1 => {
            out.push_str("{}\n");
            out.push_str(&format!(
                "{indent}  {}\n",
                c.pick(&["x=1", "y=\"a\"", "z=-"])
            ));
        }
        2 => out.push_str(&format!("[{}]: a,b\n", 1 + c.below(2))),
        _ => {
            // A shared-schema reuse (only right after an earlier declaration) or expanded.
            out.push_str(&format!(
                "[1]\n{indent}  {}\n",
                c.pick(&["1", "- x", "@0 y"])
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gcf::check_bytes;
    use crate::Roundtrip;

    /// The generator reaches the decoder's accepting paths, not only its errors: a fixed
    /// sequence of pseudo-random inputs (a linear congruential generator, so the test is
    /// reproducible) passes the oracle, and a fair share of them decode.
    #[test]
    fn documents_pass_the_oracle_and_many_decode() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut accepted = 0;
        let mut codes = std::collections::BTreeSet::new();
        for _ in 0..1000 {
            let len = (state >> 58) as usize + 8;
            let data: Vec<u8> = (0..len)
                .map(|_| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    (state >> 33) as u8
                })
                .collect();
            let text = document(&data);
            match check_bytes(text.as_bytes()) {
                Ok(Roundtrip::Ok) => accepted += 1,
                Ok(Roundtrip::Rejected(code)) => {
                    codes.insert(code);
                }
                Err(bug) => panic!("{bug}\ninput:\n{text}"),
            }
        }
        assert!(accepted >= 250, "only {accepted} of 1000 decoded");
        assert!(codes.len() >= 8, "rejections: {codes:?}");
    }
}
