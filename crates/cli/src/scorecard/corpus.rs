//! Reading a corpus: the one embedded in the binary, or the `*.json` files of a directory.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::embedded::FILES;
use crate::codec;
use crate::CliError;

/// One tool response of a corpus and which formats apply to it.
#[derive(Debug, Clone)]
pub(crate) struct Item {
    /// The file name.
    pub(crate) file: String,
    /// `code-intelligence`, `graph`, `api`, ... (`uncategorized` for plain JSON files).
    pub(crate) category: String,
    /// The tool that returned it: the GCX1 header's `tool=`.
    pub(crate) tool: String,
    /// The GCX1 per-tool layout its shape fits, if any.
    pub(crate) gcx1_layout: Option<String>,
    /// Whether it is a graph in the GCF graph model.
    pub(crate) graph: bool,
    /// The response.
    pub(crate) response: Value,
}

/// The `fixture` member of a corpus file (see fixtures/README.md).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Fixture {
    #[allow(dead_code)] // the file name says the same
    name: String,
    category: String,
    #[allow(dead_code)] // documentation for readers of the file
    description: String,
    tool: String,
    gcx1_layout: Option<String>,
    graph: bool,
}

/// The corpus compiled into the binary (a copy of the repository's `fixtures/`).
pub(crate) fn embedded() -> Result<Vec<Item>, CliError> {
    FILES.iter().map(|(file, text)| parse(file, text)).collect()
}

/// Every `*.json` file of `dir` (not recursive), in name order.
pub(crate) fn directory(dir: &Path) -> Result<Vec<Item>, CliError> {
    let read_error = |source| CliError::Read {
        path: dir.to_owned(),
        source,
    };
    let mut paths = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(read_error)? {
        let path = entry.map_err(read_error)?.path();
        if path.extension().is_some_and(|e| e == "json") && path.is_file() {
            paths.push(path);
        }
    }
    paths.sort();
    if paths.is_empty() {
        return Err(CliError::Corpus(format!(
            "{}: no .json files to measure",
            dir.display()
        )));
    }
    paths
        .iter()
        .map(|path| {
            let bytes = std::fs::read(path).map_err(|source| CliError::Read {
                path: path.clone(),
                source,
            })?;
            let text = String::from_utf8(bytes).map_err(|e| CliError::NotUtf8 {
                what: path.display().to_string(),
                offset: e.utf8_error().valid_up_to(),
            })?;
            let name = path
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            parse(&name, &text).map_err(|e| match e {
                CliError::InvalidJson { source, .. } => CliError::InvalidJson {
                    what: path.display().to_string(),
                    source,
                },
                other => other,
            })
        })
        .collect()
}

/// A corpus file: the `{"fixture": ..., "response": ...}` envelope of our corpus, or any
/// other JSON, whose applicable formats are then worked out from its shape.
fn parse(file: &str, text: &str) -> Result<Item, CliError> {
    let value: Value = serde_json::from_str(text).map_err(|source| CliError::InvalidJson {
        what: file.to_owned(),
        source,
    })?;
    match value {
        Value::Object(mut map)
            if map.len() == 2 && map.contains_key("fixture") && map.contains_key("response") =>
        {
            let fixture: Fixture =
                serde_json::from_value(map.remove("fixture").unwrap_or_default())
                    .map_err(|e| CliError::Corpus(format!("{file}: the `fixture` member: {e}")))?;
            if let Some(layout) = &fixture.gcx1_layout {
                if !agentwire_gcx1::known_tools().any(|tool| tool == layout) {
                    return Err(CliError::Corpus(format!(
                        "{file}: {layout:?} is not a GCX1 layout ({})",
                        agentwire_gcx1::known_tools().collect::<Vec<_>>().join(", ")
                    )));
                }
            }
            Ok(Item {
                file: file.to_owned(),
                category: fixture.category,
                tool: fixture.tool,
                gcx1_layout: fixture.gcx1_layout,
                graph: fixture.graph,
                response: map.remove("response").unwrap_or_default(),
            })
        }
        response => {
            // A bare response names no tool: GCX1 writes it under the file's name.
            let gcx1_layout: Option<String> = None;
            let stem = file.strip_suffix(".json").unwrap_or(file);
            let tool: String = stem
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            Ok(Item {
                file: file.to_owned(),
                category: "uncategorized".to_owned(),
                tool: gcx1_layout.clone().unwrap_or(tool),
                gcx1_layout,
                graph: codec::graph_of(&response).is_ok(),
                response,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_corpus_is_a_copy_of_the_repository_fixtures() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
        let mut on_disk: Vec<String> = std::fs::read_dir(&fixtures)
            .expect("the repository's fixtures/")
            .map(|e| {
                e.expect("an entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .filter(|name| name.ends_with(".json"))
            .collect();
        on_disk.sort();
        let embedded: Vec<String> = FILES.iter().map(|(name, _)| (*name).to_owned()).collect();
        assert_eq!(embedded, on_disk, "run `cargo xtask corpus`");
        for (name, text) in FILES {
            let committed = std::fs::read_to_string(fixtures.join(name)).expect("readable");
            assert!(
                committed == *text,
                "{name} differs: run `cargo xtask corpus`"
            );
        }
    }

    #[test]
    fn every_corpus_file_fits_the_formats_it_declares() {
        let items = embedded().expect("the embedded corpus parses");
        assert!(items.len() >= 24, "{} files", items.len());
        for item in &items {
            if let Some(tool) = &item.gcx1_layout {
                codec::encode_gcx1(Some(tool), &item.response, Default::default())
                    .unwrap_or_else(|e| panic!("{}: {e}", item.file));
            }
            assert_eq!(
                codec::graph_of(&item.response).is_ok(),
                item.graph,
                "{}",
                item.file
            );
        }
        for category in ["code-intelligence", "graph", "api"] {
            assert!(items.iter().any(|i| i.category == category));
        }
    }

    #[test]
    fn plain_json_files_get_their_formats_from_their_shape_and_name() {
        let layout = parse(
            "hits.json",
            r#"{"total": 1, "truncated": false, "results": [{"id": "a.go::F", "kind": "function",
                "name": "F", "path": "a.go", "line": 3, "sig": "func F()"}]}"#,
        )
        .expect("parses");
        // GCX1 writes a bare response under its file's name.
        assert_eq!((layout.gcx1_layout, layout.tool.as_str()), (None, "hits"));
        assert!(!layout.graph);
        let graph = parse(
            "my graph.json",
            r#"{"symbols": [{"qualifiedName": "pkg.F", "kind": "function", "score": 0.5,
                "provenance": "lsp", "distance": 0}], "edges": []}"#,
        )
        .expect("parses");
        assert!(graph.graph);
        assert_eq!(
            (graph.tool.as_str(), graph.category.as_str()),
            ("my_graph", "uncategorized")
        );
        let plain = parse("rows.json", "[1, 2]").expect("parses");
        assert_eq!((plain.gcx1_layout, plain.graph), (None, false));
        assert!(matches!(
            parse("bad.json", "{"),
            Err(CliError::InvalidJson { .. })
        ));
        assert!(matches!(
            parse("bad.json", r#"{"fixture": {"name": "x"}, "response": 1}"#),
            Err(CliError::Corpus(_))
        ));
    }
}
