//! `agentwire gcf`: the GCF pack roots, deltas and sessions of both profiles (spec §9, §10,
//! §10a).
//!
//! A snapshot is read from a file (or standard input, `-`): a GCF payload (a graph-profile
//! graph, or a generic full payload of a keyed set, its identity column named by `key=` in
//! the header or by `--key`) or JSON (a graph object in the camelCase model when it has a
//! `symbols` array, otherwise a keyed set: an array of objects, an object holding one, or a
//! map of objects, identified by `--key`, default `id`).

use std::path::{Path, PathBuf};

use agentwire_gcf::{
    DecoderOptions, Delta, GenericDelta, GenericSession, Graph, KeyedSet, Payload, Profile,
    Reanchor, Session, Spec,
};
use serde_json::Value;

use crate::{codec, input, output, CliError};

/// Arguments of `agentwire gcf`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
A snapshot is a GCF payload (a graph, or a generic full payload whose header names its
identity column with key=) or JSON: a graph object ({tool, symbols, edges, ...}) when it has
a `symbols` array, otherwise a keyed set (an array of row objects, an object holding one, or a
map of objects) identified by --key. Errors give the code, line and column of the input.")]
pub(crate) struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Print a snapshot's pack root (`sha256:...`, spec §10.2 and §10a.3).
    PackRoot {
        /// The snapshot: GCF or JSON; standard input when `-`.
        file: PathBuf,
        #[command(flatten)]
        set: SetArgs,
    },
    /// Print the delta payload that turns snapshot BASE into snapshot NEW.
    Delta {
        /// The base snapshot.
        base: PathBuf,
        /// The new snapshot.
        new: PathBuf,
        #[command(flatten)]
        set: SetArgs,
        /// `tool=` of the delta's header.
        #[arg(long)]
        tool: Option<String>,
        /// The spec version of the delta's lines (graph deltas: `3.1` writes five-field
        /// `## added` lines).
        #[arg(long, default_value = "3.6", value_parser = parse_spec)]
        spec: Spec,
    },
    /// Apply the delta payload DELTA to snapshot BASE, verifying both pack roots, and print
    /// the new snapshot as a GCF full payload (or JSON with --json).
    Apply {
        /// The base snapshot.
        base: PathBuf,
        /// The delta payload (GCF, either profile).
        delta: PathBuf,
        #[command(flatten)]
        set: SetArgs,
        /// Print the new snapshot as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Encode a sequence of calls (JSON snapshots, all graphs or all keyed sets) as one
    /// session and print each call's payload in turn: graph calls as session payloads whose
    /// symbols sent before are references; keyed sets as a full payload, then deltas (and a
    /// full payload on the re-anchor policy or a schema change).
    Session {
        /// The calls, in order.
        #[arg(required = true)]
        calls: Vec<PathBuf>,
        #[command(flatten)]
        set: SetArgs,
        /// `tool=` of the payloads' headers (keyed sets; a graph carries its own).
        #[arg(long)]
        tool: Option<String>,
        /// Keyed sets: send a full payload every N turns, or `size` when the deltas sent
        /// since the last one reach a full payload's size (spec §10a.8).
        #[arg(long, default_value = "15", value_parser = parse_reanchor)]
        reanchor: Reanchor,
    },
}

#[derive(Debug, clap::Args)]
struct SetArgs {
    /// The identity column of a keyed set given as JSON, or as GCF without `key=` in its
    /// header.
    #[arg(long, default_value = "id")]
    key: String,
}

fn parse_spec(s: &str) -> Result<Spec, String> {
    s.parse()
        .map_err(|e: agentwire_gcf::Error| e.message().to_owned())
}

fn parse_reanchor(s: &str) -> Result<Reanchor, String> {
    if s == "size" {
        return Ok(Reanchor::SizeGuard);
    }
    match s.parse::<usize>() {
        Ok(n) if n > 0 => Ok(Reanchor::Every(n)),
        _ => Err(format!(
            "expected a number of turns (at least 1) or `size`, not {s:?}"
        )),
    }
}

pub(crate) fn run(args: &Args) -> Result<(), CliError> {
    match &args.command {
        Command::PackRoot { file, set } => {
            let root = match load(file, &set.key)? {
                (Snapshot::Graph(graph), what) => {
                    agentwire_gcf::pack_root(&graph).map_err(|e| failed(&what, &e))?
                }
                (Snapshot::Set(set), what) => set.pack_root().map_err(|e| failed(&what, &e))?,
            };
            output::print(&format!("{root}\n"))
        }
        Command::Delta {
            base,
            new,
            set,
            tool,
            spec,
        } => {
            let text = match (load(base, &set.key)?, load(new, &set.key)?) {
                ((Snapshot::Graph(base), _), (Snapshot::Graph(new), what)) => {
                    let mut delta =
                        Delta::between_with(&base, &new, *spec).map_err(|e| failed(&what, &e))?;
                    delta.tool = tool.clone().or(new.tool);
                    delta.encode_with(*spec).map_err(|e| failed(&what, &e))?
                }
                ((Snapshot::Set(base), _), (Snapshot::Set(new), what)) => {
                    let mut delta =
                        GenericDelta::between(&base, &new).map_err(|e| failed(&what, &e))?;
                    delta.tool = tool.clone();
                    delta.encode().map_err(|e| failed(&what, &e))?
                }
                _ => return Err(mixed()),
            };
            output::print(&text)
        }
        Command::Apply {
            base,
            delta,
            set,
            json,
        } => {
            let (base, _) = load(base, &set.key)?;
            let (text, what) = read(delta)?;
            let profile = agentwire_gcf::profile(&text).map_err(|e| invalid(&what, &e))?;
            match (base, profile) {
                (Snapshot::Graph(base), Profile::Graph) => {
                    let delta = Delta::decode(&text).map_err(|e| invalid(&what, &e))?;
                    let applied = delta.apply(&base).map_err(|e| failed(&what, &e))?;
                    print_graph(&applied, *json)
                }
                (Snapshot::Set(base), Profile::Generic) => {
                    let delta = GenericDelta::decode(&text).map_err(|e| invalid(&what, &e))?;
                    let applied = delta.apply(&base).map_err(|e| failed(&what, &e))?;
                    if *json {
                        output::print_json(&applied.to_value(), false)
                    } else {
                        let text = applied
                            .encode(delta.tool.as_deref())
                            .map_err(|e| failed(&what, &e))?;
                        output::print(&text)
                    }
                }
                _ => Err(mixed()),
            }
        }
        Command::Session {
            calls,
            set,
            tool,
            reanchor,
        } => session(calls, &set.key, tool.as_deref(), *reanchor),
    }
}

/// A snapshot of either profile.
enum Snapshot {
    Graph(Graph),
    Set(KeyedSet),
}

/// Reads a file (or standard input for `-`) as text, with the name messages use.
fn read(path: &Path) -> Result<(String, String), CliError> {
    let path = Some(path);
    Ok((input::read_text(path)?, input::name(path)))
}

/// Reads a snapshot (see the module's docs).
fn load(path: &Path, key: &str) -> Result<(Snapshot, String), CliError> {
    let (text, what) = read(path)?;
    if text.starts_with("GCF") {
        let decoder = DecoderOptions::new();
        return match agentwire_gcf::profile(&text).map_err(|e| invalid(&what, &e))? {
            Profile::Graph => match decoder
                .decode_payload(&text)
                .map_err(|e| invalid(&what, &e))?
            {
                Payload::Graph(graph) => Ok((Snapshot::Graph(graph), what)),
                _ => Err(CliError::Gcf {
                    what,
                    message: "a delta or unchanged reply, not a snapshot".to_owned(),
                }),
            },
            _ => {
                let header = text.lines().next().unwrap_or("");
                let has_key = header.split(' ').any(|t| t.starts_with("key="));
                let set = if has_key {
                    decoder.decode_keyed_set(&text)
                } else {
                    decoder
                        .from_str::<Value>(&text)
                        .and_then(|value| KeyedSet::from_value(&value, key))
                };
                let set = set.map_err(|e| CliError::Decode {
                    what: what.clone(),
                    format: "GCF",
                    message: codec::gcf_error(header, &e),
                })?;
                Ok((Snapshot::Set(set), what))
            }
        };
    }
    let value = codec::read_json(text.as_bytes(), &what)?;
    snapshot_of(&value, key, &what).map(|s| (s, what))
}

/// A JSON value as a snapshot: a graph when it has a `symbols` array, else a keyed set.
fn snapshot_of(value: &Value, key: &str, what: &str) -> Result<Snapshot, CliError> {
    if value.get("symbols").is_some_and(Value::is_array) {
        let (graph, _) = codec::graph_of(value)?;
        return Ok(Snapshot::Graph(graph));
    }
    KeyedSet::from_value(value, key)
        .map(Snapshot::Set)
        .map_err(|e| CliError::Shape {
            target: format!("a GCF keyed set identified by {key:?} ({what})"),
            message: e.message().to_owned(),
        })
}

fn print_graph(graph: &Graph, json: bool) -> Result<(), CliError> {
    if json {
        let value = serde_json::to_value(graph).map_err(|e| CliError::Encode {
            format: "JSON",
            message: e.to_string(),
        })?;
        return output::print_json(&value, false);
    }
    let graph = graph
        .clone()
        .with_pack_root()
        .map_err(|e| CliError::Encode {
            format: "GCF (graph profile)",
            message: e.to_string(),
        })?;
    output::print(&codec::encode_gcf_graph(&graph)?)
}

fn session(
    calls: &[PathBuf],
    key: &str,
    tool: Option<&str>,
    reanchor: Reanchor,
) -> Result<(), CliError> {
    let mut snapshots = Vec::with_capacity(calls.len());
    for call in calls {
        let (text, what) = read(call)?;
        let value = codec::read_json(text.as_bytes(), &what)?;
        snapshots.push((snapshot_of(&value, key, &what)?, what));
    }
    let mut out = String::new();
    match snapshots.first() {
        Some((Snapshot::Graph(_), _)) => {
            let mut session = Session::new();
            for (snapshot, what) in &snapshots {
                let Snapshot::Graph(graph) = snapshot else {
                    return Err(mixed());
                };
                out.push_str(&session.encode(graph).map_err(|e| failed(what, &e))?);
            }
        }
        Some((Snapshot::Set(first), what)) => {
            let mut session = GenericSession::new(first.clone(), tool.map(str::to_owned), reanchor)
                .map_err(|e| failed(what, &e))?;
            out.push_str(&session.full().map_err(|e| failed(what, &e))?);
            for (snapshot, what) in &snapshots[1..] {
                let Snapshot::Set(set) = snapshot else {
                    return Err(mixed());
                };
                let emission = session.next(set.clone()).map_err(|e| failed(what, &e))?;
                out.push_str(&emission.text);
            }
        }
        None => {}
    }
    output::print(&out)
}

/// A GCF input that does not decode: its code, line and column.
fn invalid(what: &str, e: &agentwire_gcf::Error) -> CliError {
    CliError::Decode {
        what: what.to_owned(),
        format: "GCF",
        message: e.to_string(),
    }
}

/// An operation on valid inputs that fails (a root that does not verify, a value the wire
/// cannot carry).
fn failed(what: &str, e: &agentwire_gcf::Error) -> CliError {
    CliError::Gcf {
        what: what.to_owned(),
        message: e.to_string(),
    }
}

fn mixed() -> CliError {
    CliError::Usage(
        "the snapshots (and the delta) must be of one profile: all graphs or all keyed sets"
            .to_owned(),
    )
}
