//! The ChoiceGraph that path browsing walks (spec §3): root → namespaces → clusters → leaves.
//!
//! # Shape
//!
//! - The root has one child per namespace, always, whatever the catalog's size (so `/`
//!   lists namespaces and `/github` addresses the `github` namespace, as §3.3 shows).
//! - A namespace with at most [`CLUSTER_THRESHOLD`] (20) tools has its tools as children.
//! - A larger namespace has clusters as children, and each cluster has its tools.
//!
//! # Leaf segments
//!
//! A tool's segment is its tool_id name made addressable by the path grammar: lower-cased,
//! every character outside `[a-z0-9_-]` replaced by `-`, leading characters outside
//! `[a-z0-9]` removed, cut to 64 characters (`tool` if nothing is left). When two tools of
//! a namespace get the same segment (`Get_User` and `get.user`, or two versions of one tool),
//! the tools are taken in id order and the second gets `-2`, the third `-3`, and so on (the
//! base is shortened so the segment stays within 64 characters).
//!
//! # The cluster rule
//!
//! For a namespace above the threshold, clusters are derived from the tools' names alone:
//!
//! 1. The keywords of a tool are the words of its tool_id name (split at `_`, `-`, `.` and
//!    camelCase humps, lower-cased, plurals reduced: `list_issues` → `list`, `issue`),
//!    without stop words, without common verbs (`get`, `list`, `create`, `update`,
//!    `delete`, `search`, ...), without the words of the namespace itself, without words of
//!    one character or only digits, and without words that every tool of the namespace has.
//! 2. Repeatedly, the keyword shared by the most tools not yet in a cluster (at least two;
//!    ties go to the alphabetically first keyword) becomes a cluster of those tools, until no
//!    keyword is shared by two remaining tools or there are 19 clusters. The cluster's
//!    segment is the keyword in the plural (`issue` → `issues`, `repository` →
//!    `repositories`, `branch` → `branches`), as in the spec's `/github/issues`.
//! 3. The remaining tools form the cluster `other`.
//! 4. If this gives fewer than two clusters, the tools are instead cut, in segment order,
//!    into pages of 20: `page-1`, `page-2`, ...
//!
//! A cluster may hold more than 20 tools (a keyword shared by many); every tool is in exactly
//! one cluster, so every tool has exactly one path.

use std::collections::{BTreeMap, BTreeSet};

use crate::card::{CardKind, ChoiceCard};
use crate::error::{clip, Error, ErrorKind};
use crate::path::BrowsePath;
use crate::rank::{is_stop_word, stem, words};

/// Namespaces with more tools than this are split into clusters.
pub const CLUSTER_THRESHOLD: usize = 20;
const MAX_KEYWORD_CLUSTERS: usize = CLUSTER_THRESHOLD - 1;
const MAX_SEGMENT: usize = 64;

const CLUSTER_STOP_WORDS: &[&str] = &[
    "add", "check", "create", "delete", "do", "edit", "fetch", "find", "get", "is", "list", "make",
    "mcp", "new", "other", "page", "patch", "post", "put", "query", "read", "remove", "run",
    "search", "send", "set", "update", "write",
];

/// What a graph node stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NodeKind {
    /// The root, `/`.
    Root,
    /// A namespace, `/github`.
    Namespace,
    /// A cluster inside a large namespace, `/github/issue`.
    Cluster,
    /// A tool.
    Leaf,
}

/// One node of a [`ChoiceGraph`].
#[derive(Debug, Clone)]
pub struct GraphNode {
    path: String,
    kind: NodeKind,
    /// For namespaces and clusters: their internal card.
    card: Option<ChoiceCard>,
    /// For leaves: the tool's index in the catalog.
    tool: Option<usize>,
    /// Child node indices, ordered by the id of their card (§2.5 without scores).
    children: Vec<usize>,
}

impl GraphNode {
    /// The node's path: `/`, `/github`, `/github/issue`, `/github/issue/create_issue`.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The node's kind.
    pub fn kind(&self) -> NodeKind {
        self.kind
    }

    /// The node's segment: the last component of its path (empty for the root).
    pub fn segment(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or("")
    }

    /// The internal card of a namespace or cluster node.
    pub fn card(&self) -> Option<&ChoiceCard> {
        self.card.as_ref()
    }
}

/// The navigation graph of a catalog; built by [`Catalog`](crate::Catalog).
#[derive(Debug, Clone)]
pub struct ChoiceGraph {
    nodes: Vec<GraphNode>,
    /// Leaf node index per tool index.
    leaves: Vec<usize>,
}

/// A tool as the graph sees it.
pub(crate) struct LeafInput<'a> {
    pub(crate) namespace: &'a str,
    pub(crate) name: &'a str,
}

impl ChoiceGraph {
    /// Builds the graph; `tools` must be sorted by tool_id.
    pub(crate) fn build(tools: &[LeafInput<'_>]) -> Result<ChoiceGraph, Error> {
        let mut by_namespace: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (i, tool) in tools.iter().enumerate() {
            by_namespace.entry(tool.namespace).or_default().push(i);
        }
        let mut graph = ChoiceGraph {
            nodes: vec![GraphNode {
                path: "/".into(),
                kind: NodeKind::Root,
                card: None,
                tool: None,
                children: Vec::new(),
            }],
            leaves: vec![0; tools.len()],
        };
        for (namespace, members) in by_namespace {
            let segments = leaf_segments(members.iter().map(|&i| tools[i].name));
            let ns_path = format!("/{namespace}");
            let ns_node = graph.push(GraphNode {
                path: ns_path.clone(),
                kind: NodeKind::Namespace,
                card: None,
                tool: None,
                children: Vec::new(),
            });
            graph.nodes[0].children.push(ns_node);
            let description;
            if members.len() <= CLUSTER_THRESHOLD {
                for (k, &tool) in members.iter().enumerate() {
                    let leaf = graph.push_leaf(&ns_path, &segments[k], tool);
                    graph.nodes[ns_node].children.push(leaf);
                }
                description = summary(members.len(), "tool", segments.iter());
            } else {
                let names: Vec<&str> = members.iter().map(|&i| tools[i].name).collect();
                let clusters = clusters(namespace, &names, &segments);
                for (label, positions) in &clusters {
                    let cluster_path = format!("{ns_path}/{label}");
                    let cluster = graph.push(GraphNode {
                        path: cluster_path.clone(),
                        kind: NodeKind::Cluster,
                        card: None,
                        tool: None,
                        children: Vec::new(),
                    });
                    graph.nodes[ns_node].children.push(cluster);
                    let mut member_segments = Vec::new();
                    for &k in positions {
                        let leaf = graph.push_leaf(&cluster_path, &segments[k], members[k]);
                        graph.nodes[cluster].children.push(leaf);
                        member_segments.push(&segments[k]);
                    }
                    let card = ChoiceCard::builder(cluster_path, CardKind::Internal)
                        .name(label.clone())
                        .namespace(namespace)
                        .description(summary(
                            positions.len(),
                            "tool",
                            member_segments.into_iter(),
                        ))
                        .build()?;
                    graph.nodes[cluster].card = Some(card);
                }
                description = format!(
                    "{} tools in {} groups: {}",
                    members.len(),
                    clusters.len(),
                    list(clusters.iter().map(|(label, _)| label))
                );
            }
            let card = ChoiceCard::builder(ns_path, CardKind::Internal)
                .name(namespace)
                .namespace(namespace)
                .description(description)
                .build()?;
            graph.nodes[ns_node].card = Some(card);
        }
        Ok(graph)
    }

    fn push(&mut self, node: GraphNode) -> usize {
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    fn push_leaf(&mut self, parent: &str, segment: &str, tool: usize) -> usize {
        let node = self.push(GraphNode {
            path: format!("{parent}/{segment}"),
            kind: NodeKind::Leaf,
            card: None,
            tool: Some(tool),
            children: Vec::new(),
        });
        self.leaves[tool] = node;
        node
    }

    /// The root node.
    pub fn root(&self) -> &GraphNode {
        &self.nodes[0]
    }

    /// The children of a node, in order.
    pub fn children<'a>(&'a self, node: &'a GraphNode) -> impl Iterator<Item = &'a GraphNode> + 'a {
        node.children.iter().map(move |&i| &self.nodes[i])
    }

    /// Every node, root first, then each namespace followed by its subtree.
    pub fn nodes(&self) -> impl ExactSizeIterator<Item = &GraphNode> {
        self.nodes.iter()
    }

    /// The number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the graph has only its root (an empty catalog).
    pub fn is_empty(&self) -> bool {
        self.nodes.len() == 1
    }

    /// The node a path addresses, or `PATH_NOT_FOUND`. A trailing `*` is ignored (it lists
    /// the children of the node before it).
    pub fn resolve(&self, path: &BrowsePath) -> Result<&GraphNode, Error> {
        let mut node = &self.nodes[0];
        for segment in path.segments() {
            match self.children(node).find(|child| child.segment() == segment) {
                Some(child) => node = child,
                None => {
                    return Err(Error::new(ErrorKind::PathNotFound {
                        path: clip(path.as_str()),
                        resolved: node.path.clone(),
                    }))
                }
            }
        }
        Ok(node)
    }

    /// The tool index of a leaf node.
    pub(crate) fn tool_of(&self, node: &GraphNode) -> Option<usize> {
        node.tool
    }

    /// The path of a tool's leaf.
    pub(crate) fn leaf_path(&self, tool: usize) -> &str {
        &self.nodes[self.leaves[tool]].path
    }
}

fn summary<'a>(n: usize, noun: &str, names: impl Iterator<Item = &'a String>) -> String {
    let plural = if n == 1 { "" } else { "s" };
    format!("{n} {noun}{plural}: {}", list(names))
}

/// Up to six names joined by `, `, then `…` when there are more.
fn list<'a>(names: impl Iterator<Item = &'a String>) -> String {
    let names: Vec<&String> = names.collect();
    let mut out = names
        .iter()
        .take(6)
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > 6 {
        out.push_str(", \u{2026}");
    }
    out
}

/// The path segment for each tool name, distinct within the namespace; `names` come in
/// tool_id order.
fn leaf_segments<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut taken = BTreeSet::new();
    let mut out = Vec::new();
    for name in names {
        let base = slug(name);
        let mut segment = base.clone();
        let mut n = 2usize;
        while taken.contains(&segment) {
            let suffix = format!("-{n}");
            let keep = base.len().min(MAX_SEGMENT - suffix.len());
            segment = format!("{}{suffix}", &base[..keep]);
            n += 1;
        }
        taken.insert(segment.clone());
        out.push(segment);
    }
    out
}

fn slug(name: &str) -> String {
    let mapped: String = name
        .chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let trimmed = mapped.trim_start_matches(|c: char| !c.is_ascii_alphanumeric());
    let mut slug: String = trimmed.chars().take(MAX_SEGMENT).collect();
    if slug.is_empty() {
        slug.push_str("tool");
    }
    slug
}

/// The clusters of one large namespace: `(label, positions into names)`, ordered by label.
fn clusters(namespace: &str, names: &[&str], segments: &[String]) -> Vec<(String, Vec<usize>)> {
    let own: BTreeSet<String> = words(namespace).into_iter().collect();
    let keywords: Vec<BTreeSet<String>> = names
        .iter()
        .map(|name| {
            words(name)
                .into_iter()
                .filter(|w| {
                    w.len() > 1
                        && !w.bytes().all(|b| b.is_ascii_digit())
                        && w.len() <= MAX_SEGMENT - 2
                        && !is_stop_word(w)
                        && CLUSTER_STOP_WORDS.binary_search(&w.as_str()).is_err()
                        && CLUSTER_STOP_WORDS.binary_search(&stem(w).as_str()).is_err()
                        && !own.contains(w)
                })
                .collect()
        })
        .collect();
    let universal: BTreeSet<String> = match keywords.split_first() {
        Some((first, rest)) => first
            .iter()
            .filter(|w| rest.iter().all(|k| k.contains(*w)))
            .cloned()
            .collect(),
        None => BTreeSet::new(),
    };
    let mut assigned = vec![false; names.len()];
    let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
    while groups.len() < MAX_KEYWORD_CLUSTERS {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for (k, set) in keywords.iter().enumerate() {
            if assigned[k] {
                continue;
            }
            for w in set {
                if !universal.contains(w) {
                    *counts.entry(w.as_str()).or_default() += 1;
                }
            }
        }
        // Highest count; among equal counts the first keyword in order (BTreeMap order).
        let best = counts.iter().filter(|&(_, &c)| c >= 2).fold(
            None::<(&str, usize)>,
            |best, (&w, &c)| match best {
                Some((_, bc)) if bc >= c => best,
                _ => Some((w, c)),
            },
        );
        let Some((keyword, _)) = best else { break };
        let keyword = keyword.to_owned();
        let members: Vec<usize> = (0..names.len())
            .filter(|&k| !assigned[k] && keywords[k].contains(&keyword))
            .collect();
        for &k in &members {
            assigned[k] = true;
        }
        groups.push((plural(&keyword), members));
    }
    let rest: Vec<usize> = (0..names.len()).filter(|&k| !assigned[k]).collect();
    if !rest.is_empty() {
        groups.push(("other".into(), rest));
    }
    if groups.len() < 2 {
        let mut order: Vec<usize> = (0..names.len()).collect();
        order.sort_by(|&a, &b| segments[a].cmp(&segments[b]));
        return order
            .chunks(CLUSTER_THRESHOLD)
            .enumerate()
            .map(|(i, chunk)| (format!("page-{}", i + 1), chunk.to_vec()))
            .collect();
    }
    groups.sort_by(|a, b| a.0.cmp(&b.0));
    for (_, members) in &mut groups {
        members.sort_by(|&a, &b| segments[a].cmp(&segments[b]));
    }
    groups
}

/// A cluster's label: its keyword in the plural (`issue` → `issues`, `repository` →
/// `repositories`, `branch` → `branches`), so paths read like the spec's `/github/issues`.
fn plural(word: &str) -> String {
    let bytes = word.as_bytes();
    let consonant_y = bytes.len() >= 2
        && word.ends_with('y')
        && !matches!(bytes[bytes.len() - 2], b'a' | b'e' | b'i' | b'o' | b'u');
    if consonant_y {
        format!("{}ies", &word[..word.len() - 1])
    } else if ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|end| word.ends_with(end))
    {
        format!("{word}es")
    } else {
        format!("{word}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_list_is_sorted() {
        assert!(CLUSTER_STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn slugs_and_collisions() {
        assert_eq!(slug("create_issue"), "create_issue");
        assert_eq!(slug("Get.User"), "get-user");
        assert_eq!(slug("_private"), "private");
        assert_eq!(slug("__"), "tool");
        assert_eq!(slug(&"x".repeat(100)).len(), 64);
        let segs = leaf_segments(["Get_User", "get.user", "get_user", "get_user"].into_iter());
        assert_eq!(segs, ["get_user", "get-user", "get_user-2", "get_user-3"]);
        let long = "y".repeat(64);
        let segs = leaf_segments([long.as_str(), long.as_str()].into_iter());
        assert_eq!(segs[1].len(), 64);
        assert!(segs[1].ends_with("-2"));
    }

    #[test]
    fn keyword_clusters() {
        let names = [
            "create_issue",
            "get_issue",
            "list_issues",
            "close_issue",
            "create_pull_request",
            "merge_pull_request",
            "list_pull_requests",
            "get_repo",
            "list_repos",
            "fork_repo",
            "star",
            "search_code",
            "create_gist",
            "get_me",
            "list_branches",
            "create_branch",
            "delete_branch",
            "get_commit",
            "list_commits",
            "get_file_contents",
            "push_files",
        ];
        let segments = leaf_segments(names.iter().copied());
        let groups = clusters("github", &names, &segments);
        let labels: Vec<&str> = groups.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(
            labels,
            ["branches", "commits", "files", "issues", "other", "pulls", "repos"]
        );
        let total: usize = groups.iter().map(|(_, m)| m.len()).sum();
        assert_eq!(total, names.len());
    }

    #[test]
    fn pages_when_no_keyword_is_shared() {
        let names: Vec<String> = (0..25).map(|i| format!("tool{i:02}x")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let segments = leaf_segments(refs.iter().copied());
        let groups = clusters("ns", &refs, &segments);
        let labels: Vec<&str> = groups.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(labels, ["page-1", "page-2"]);
        assert_eq!(groups[0].1.len(), 20);
    }
}
