//! `cargo xtask corpus [--check]`: writes the scorecard corpus, `fixtures/*.json`, from a
//! seeded generator, plus the copy embedded in the `agentwire` binary (`crates/cli/corpus/`)
//! and its index (`crates/cli/src/scorecard/embedded.rs`). `--check` writes nothing and fails
//! when any committed file differs from what the generator writes.
//!
//! Why a copy: a published crate cannot include files outside its own folder, so the
//! command carries byte-identical copies of the fixtures (Git stores each content once).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::{root, TaskError};

mod api;
mod code;
pub(crate) mod gen;
mod graph;

/// One corpus file: a tool response and what the scorecard needs to know about it.
#[derive(Debug)]
pub(crate) struct Entry {
    /// The file name without `.json`.
    name: String,
    /// `code-intelligence`, `graph` or `api`.
    category: &'static str,
    /// The tool that would have returned the response (the GCX1 header's `tool=`).
    tool: String,
    /// The GCX1 per-tool layout whose input shape the response has, if any.
    gcx1_layout: Option<String>,
    /// Whether the response is a graph in the GCF graph profile's JSON model.
    graph: bool,
    description: &'static str,
    response: Value,
}

impl Entry {
    /// A code-intelligence response in the shape of the GCX1 layout of `tool`.
    fn layout(
        tool: &str,
        category: &'static str,
        description: &'static str,
        response: Value,
    ) -> Self {
        Entry {
            name: tool.replace('.', "_").trim_start_matches("get_").to_owned(),
            category,
            tool: tool.to_owned(),
            gcx1_layout: Some(tool.to_owned()),
            graph: false,
            description,
            response,
        }
    }

    /// A graph payload in the GCF graph model.
    fn graph(name: &str, tool: &str, description: &'static str, response: Value) -> Self {
        Entry {
            name: name.to_owned(),
            category: "graph",
            tool: tool.to_owned(),
            gcx1_layout: None,
            graph: true,
            description,
            response,
        }
    }

    /// A generic API payload.
    fn generic(name: &str, tool: &str, description: &'static str, response: Value) -> Self {
        Entry {
            name: name.to_owned(),
            category: "api",
            tool: tool.to_owned(),
            gcx1_layout: None,
            graph: false,
            description,
            response,
        }
    }

    /// The file: `{"fixture": {...}, "response": ...}`, pretty-printed.
    fn to_json(&self) -> String {
        let value = json!({
            "fixture": {
                "name": self.name,
                "category": self.category,
                "description": self.description,
                "tool": self.tool,
                "gcx1_layout": self.gcx1_layout,
                "graph": self.graph,
            },
            "response": self.response,
        });
        let mut text = serde_json::to_string_pretty(&value).expect("JSON values serialize");
        text.push('\n');
        text
    }
}

/// Every corpus entry, in file-name order.
fn entries() -> Vec<Entry> {
    let mut all = code::entries();
    all.extend(graph::entries());
    all.extend(api::entries());
    all.sort_by(|a, b| a.name.cmp(&b.name));
    all
}

const FIXTURES: &str = "fixtures";
const EMBEDDED_DIR: &str = "crates/cli/corpus";
const EMBEDDED_INDEX: &str = "crates/cli/src/scorecard/embedded.rs";

/// Every file the generator owns, relative to the root, with its contents.
fn outputs() -> BTreeMap<PathBuf, String> {
    let entries = entries();
    let mut files = BTreeMap::new();
    for entry in &entries {
        let file = format!("{}.json", entry.name);
        let text = entry.to_json();
        files.insert(Path::new(FIXTURES).join(&file), text.clone());
        files.insert(Path::new(EMBEDDED_DIR).join(&file), text);
    }
    files.insert(Path::new(FIXTURES).join("README.md"), readme(&entries));
    files.insert(PathBuf::from(EMBEDDED_INDEX), index(&entries));
    files
}

fn readme(entries: &[Entry]) -> String {
    let mut text = String::from(
        "# Corpus\n\
         \n\
         Representative tool responses, as JSON, for the token scorecard (`agentwire scorecard`,\n\
         `cargo xtask scorecard`): code-intelligence results in the shapes of the GCX1 per-tool\n\
         layouts, graph payloads in the GCF graph profile's model, and generic API payloads.\n\
         \n\
         Every file is written by the seeded generator in `xtask/src/corpus/` — do not edit them by\n\
         hand; change the generator and run `cargo xtask corpus` (`cargo xtask corpus --check`\n\
         fails when a committed file differs from what the generator writes). The `agentwire`\n\
         command embeds byte-identical copies (`crates/cli/corpus/`), because a published crate\n\
         cannot include files outside its folder.\n\
         \n\
         Each file is an object with two members: `fixture` says what the response is and which\n\
         formats apply to it — `tool` (the tool that returned it, used as the GCX1 header's\n\
         `tool=`), `gcx1_layout` (the GCX1 per-tool layout whose input shape it has, or `null`\n\
         for the generic fallback) and `graph` (whether it is a graph in the GCF graph model) —\n\
         and `response` is the tool response itself.\n\
         \n\
         | file | category | tool | GCX1 layout | graph | what |\n\
         |---|---|---|---|---|---|\n",
    );
    for e in entries {
        text.push_str(&format!(
            "| [{name}.json]({name}.json) | {} | `{}` | {} | {} | {} |\n",
            e.category,
            e.tool,
            e.gcx1_layout
                .as_deref()
                .map_or("—".to_owned(), |l| format!("`{l}`")),
            if e.graph { "yes" } else { "—" },
            e.description,
            name = e.name,
        ));
    }
    text
}

fn index(entries: &[Entry]) -> String {
    let mut text = String::from(
        "// @generated by `cargo xtask corpus`: do not edit.\n\
         //! The corpus embedded in the binary: byte-identical copies of `fixtures/*.json`.\n\
         \n\
         macro_rules! corpus {\n    \
             ($($name:literal),* $(,)?) => {\n        \
                 &[$(($name, include_str!(concat!(\"../../corpus/\", $name)))),*]\n    \
             };\n\
         }\n\
         \n\
         /// `(file name, contents)` of every corpus file, in name order.\n\
         pub(crate) const FILES: &[(&str, &str)] = corpus![\n",
    );
    for e in entries {
        text.push_str(&format!("    \"{}.json\",\n", e.name));
    }
    text.push_str("];\n");
    text
}

/// `cargo xtask corpus [--check]`.
pub(crate) fn run(args: &[String]) -> Result<(), TaskError> {
    let check = match args {
        [] => false,
        [flag] if flag == "--check" => true,
        _ => return Err(format!("usage: cargo xtask corpus [--check], not {args:?}").into()),
    };
    let root = root();
    let outputs = outputs();
    let mut stale = Vec::new();
    for (path, text) in &outputs {
        let full = root.join(path);
        let current = fs::read_to_string(&full).ok();
        if current.as_deref() == Some(text.as_str()) {
            continue;
        }
        if check {
            stale.push(path.display().to_string());
            continue;
        }
        if let Some(dir) = full.parent() {
            fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        fs::write(&full, text).map_err(|e| format!("cannot write {}: {e}", full.display()))?;
        eprintln!("wrote {}", path.display());
    }
    // Files the generator no longer writes.
    for dir in [FIXTURES, EMBEDDED_DIR] {
        let entries =
            fs::read_dir(root.join(dir)).map_err(|e| format!("cannot list {dir}: {e}"))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("cannot list {dir}: {e}"))?;
            let path = Path::new(dir).join(entry.file_name());
            if !outputs.contains_key(&path) {
                if check {
                    stale.push(format!("{} (not written by the generator)", path.display()));
                } else {
                    fs::remove_file(root.join(&path))
                        .map_err(|e| format!("cannot remove {}: {e}", path.display()))?;
                    eprintln!("removed {}", path.display());
                }
            }
        }
    }
    if !stale.is_empty() {
        return Err(format!(
            "the corpus differs from what the generator writes; run `cargo xtask corpus`:\n  {}",
            stale.join("\n  ")
        )
        .into());
    }
    let count = entries().len();
    eprintln!(
        "corpus: {count} files {}",
        if check { "up to date" } else { "written" }
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `cargo xtask corpus --check`, run by `cargo test` (and so by CI).
    #[test]
    fn the_committed_corpus_is_what_the_generator_writes() {
        let root = root();
        for (path, text) in outputs() {
            let committed = fs::read_to_string(root.join(&path)).unwrap_or_default();
            assert!(
                committed == text,
                "{} differs from the generator's output: run `cargo xtask corpus`",
                path.display()
            );
        }
    }

    #[test]
    fn the_corpus_has_every_kind_of_response() {
        let entries = entries();
        assert!(entries.len() >= 24);
        let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
        for name in [
            "search_symbols",
            "find_usages",
            "callers",
            "file_summary",
            "symbol_source",
            "graph_10",
            "graph_30",
            "graph_500",
            "issues",
            "orders",
            "employees",
            "event_logs",
            "analytics",
            "directory_listing",
            "knowledge_graph",
            "nested_config",
            "feature_flags",
            "search_results",
        ] {
            assert!(names.contains(&name), "{name}");
        }
        let graph_500 = entries.iter().find(|e| e.name == "graph_500").unwrap();
        assert_eq!(graph_500.response["symbols"].as_array().unwrap().len(), 500);
        // Seeded: the same corpus every time.
        assert_eq!(entries[3].to_json(), super::entries()[3].to_json());
    }
}
