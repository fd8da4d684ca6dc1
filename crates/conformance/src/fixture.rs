//! The fixture envelope, fixture discovery and the expected-failures file.

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::Value;

/// The operation-specific part of a fixture: one enum per codec family, with one variant per
/// operation, named as the operation (`#[serde(rename = "encode")]`), and read with
/// `deny_unknown_fields`.
///
/// The enum uses serde's default, externally tagged representation: the loader lifts the
/// envelope's `operation` field out and hands `{"<operation>": {<other fields>}}` to the enum.
/// (Serde's internally tagged enums buffer values in a form that cannot hold integers beyond
/// 64 bits, and fixtures depend on those.)
pub trait Case: DeserializeOwned + Send + Sync + 'static {
    /// The operation's name as written in the fixture (`encode`, `decode`, ...).
    fn operation(&self) -> &'static str;
}

/// One fixture file: the envelope (`name`, `description`) and its operation-specific case.
#[derive(Debug, Clone)]
pub struct Fixture<C> {
    /// The fixture's path relative to its suite, without `.json` and with `/` separators, for
    /// example `scalar/001_string_true`. Trial names and expected-failures entries use it.
    pub id: String,
    /// The fixture file.
    pub path: PathBuf,
    /// The fixture's `name` field.
    pub name: String,
    /// The fixture's `description` field.
    pub description: String,
    /// The operation and its fields.
    pub case: C,
}

/// Why a fixture file could not be read as a fixture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    /// The fixture file.
    pub path: PathBuf,
    /// What was wrong with it.
    pub message: String,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for LoadError {}

/// Reads one fixture file.
///
/// The envelope must be a JSON object with string `name`, `description` and `operation`
/// fields; the other fields are deserialized into `C`'s variant for that operation, which
/// rejects unknown fields. Numbers keep their lexemes and objects their member order.
pub fn load_fixture<C: Case>(path: &Path, id: &str) -> Result<Fixture<C>, LoadError> {
    let fail = |message: String| LoadError {
        path: path.to_owned(),
        message,
    };
    let text = fs::read_to_string(path).map_err(|e| fail(format!("cannot read: {e}")))?;
    // Split the envelope without parsing the operation's fields, then hand those fields to `C`
    // as text: deserializing from text is the only path on which serde_json keeps number
    // lexemes such as `-0` and `6.022E+23` intact.
    let mut fields: BTreeMap<String, Box<RawValue>> =
        serde_json::from_str(&text).map_err(|e| fail(format!("not a JSON object: {e}")))?;
    let mut take_string = |field: &str| -> Result<String, LoadError> {
        let raw = fields
            .remove(field)
            .ok_or_else(|| fail(format!("missing field `{field}`")))?;
        serde_json::from_str(raw.get())
            .map_err(|_| fail(format!("`{field}` must be a string, found {}", raw.get())))
    };
    let name = take_string("name")?;
    let description = take_string("description")?;
    let operation = take_string("operation")?;
    let mut tagged = String::with_capacity(text.len() + operation.len() + 8);
    tagged.push('{');
    tagged.push_str(&Value::String(operation).to_string());
    tagged.push_str(":{");
    for (i, (key, raw)) in fields.iter().enumerate() {
        if i > 0 {
            tagged.push(',');
        }
        tagged.push_str(&Value::String(key.clone()).to_string());
        tagged.push(':');
        tagged.push_str(raw.get());
    }
    tagged.push_str("}}");
    let case = serde_json::from_str::<C>(&tagged).map_err(|e| fail(strip_position(&e)))?;
    Ok(Fixture {
        id: id.to_owned(),
        path: path.to_owned(),
        name,
        description,
        case,
    })
}

/// A serde_json error message without its " at line L column C" suffix, which would point
/// into the re-assembled text rather than the fixture file.
fn strip_position(error: &serde_json::Error) -> String {
    let message = error.to_string();
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message,
    }
}

/// Lists the `.json` files under `dir`, recursively, as `(id, path)` pairs sorted by id.
/// Other files (licences, provenance notes) are not fixtures and are left alone.
pub(crate) fn discover(dir: &Path) -> std::io::Result<Vec<(String, PathBuf)>> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(current) = pending.pop() {
        for entry in fs::read_dir(&current)? {
            let path = entry?.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "json") {
                let relative = path.strip_prefix(dir).unwrap_or(&path).with_extension("");
                let id = relative
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/");
                found.push((id, path));
            }
        }
    }
    found.sort();
    Ok(found)
}

/// A parsed expected-failures file: fixture ids, one per line.
///
/// Blank lines and lines starting with `#` are ignored; text after ` #` on an entry line is a
/// comment (a reason). A missing file is an empty list, so nothing is ever excused by accident.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExpectedFailures {
    /// Fixture id → 1-based line number in the file.
    pub entries: BTreeMap<String, usize>,
}

impl ExpectedFailures {
    /// Reads `path`; returns an empty list if it does not exist.
    pub fn load(path: &Path) -> Result<Self, ExpectedFailuresError> {
        match fs::read_to_string(path) {
            Ok(text) => Self::parse(&text).map_err(|e| e.in_file(path)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(source) => Err(ExpectedFailuresError::Read {
                path: path.to_owned(),
                source,
            }),
        }
    }

    /// Parses the text of an expected-failures file; a duplicate entry is an error.
    pub fn parse(text: &str) -> Result<Self, ExpectedFailuresError> {
        let mut entries = BTreeMap::new();
        for (index, raw) in text.lines().enumerate() {
            let line = raw.split(" #").next().unwrap_or("").trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if let Some(first) = entries.insert(line.to_owned(), index + 1) {
                return Err(ExpectedFailuresError::Duplicate {
                    path: None,
                    id: line.to_owned(),
                    line: index + 1,
                    first,
                });
            }
        }
        Ok(Self { entries })
    }

    /// Whether `id` is listed.
    pub fn contains(&self, id: &str) -> bool {
        self.entries.contains_key(id)
    }
}

/// Why an expected-failures file cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExpectedFailuresError {
    /// The file exists but cannot be read.
    #[error("{}: cannot read: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A fixture id is listed twice.
    #[error("{}line {line}: `{id}` is already listed on line {first}", file_prefix(path.as_deref()))]
    Duplicate {
        /// The file, when the text came from one.
        path: Option<PathBuf>,
        /// The fixture id.
        id: String,
        /// The 1-based line of the second entry.
        line: usize,
        /// The 1-based line of the first entry.
        first: usize,
    },
}

impl ExpectedFailuresError {
    fn in_file(self, file: &Path) -> Self {
        match self {
            ExpectedFailuresError::Duplicate {
                id, line, first, ..
            } => ExpectedFailuresError::Duplicate {
                path: Some(file.to_owned()),
                id,
                line,
                first,
            },
            other => other,
        }
    }
}

fn file_prefix(path: Option<&Path>) -> String {
    path.map(|p| format!("{}: ", p.display()))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expected_failures_syntax() {
        let list =
            ExpectedFailures::parse("# header\n\nscalar/001 # not yet\n  numbers/007  \n").unwrap();
        assert_eq!(list.entries.len(), 2);
        assert!(list.contains("scalar/001"));
        assert_eq!(list.entries["numbers/007"], 4);
        let err = ExpectedFailures::parse("a\nb\na\n").unwrap_err();
        assert_eq!(err.to_string(), "line 3: `a` is already listed on line 1");
    }

    #[test]
    fn missing_expected_failures_file_is_empty() {
        let list = ExpectedFailures::load(Path::new("/nonexistent/agentwire/list.txt")).unwrap();
        assert!(list.entries.is_empty());
    }
}
