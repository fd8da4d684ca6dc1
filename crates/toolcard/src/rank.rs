//! Words and BM25 ranking for query browse (spec §3.1).
//!
//! Text is split into words as follows: runs of alphanumeric characters (Unicode), each run
//! split again at camelCase humps (`getUserById` → `get`, `user`, `by`, `id`;
//! `HTMLParser` → `html`, `parser`), lower-cased, then reduced by a light plural rule
//! (`issues` → `issue`, `entries` → `entry`, `classes` → `class`; words ending in `ss`, `us`
//! or `is` and words of three letters or fewer are kept). Query words in a short English
//! stop-word list (`the`, `a`, `of`, ...) are dropped, so they neither match nor pad results.
//!
//! Each tool is one document of three fields: its name (the namespace and name of its id
//! plus its title), its description and its tags. Name words count twice (a simple BM25F
//! weighting). The score is Okapi BM25 with `k1 = 1.2`, `b = 0.75` and the non-negative idf
//! `ln(1 + (N − df + 0.5) / (df + 0.5))`, summed over the distinct query words in sorted
//! order and rounded to 4 decimal places, so that ties and order are the same on every
//! platform. Tools scoring 0 (no query word matches) are never returned.

use std::collections::{BTreeMap, BTreeSet};

/// Weight of the name field relative to description and tags.
const NAME_WEIGHT: u32 = 2;
const K1: f64 = 1.2;
const B: f64 = 0.75;

const STOP_WORDS: &[&str] = &[
    "a", "about", "all", "an", "and", "any", "are", "as", "at", "be", "been", "but", "by", "can",
    "could", "do", "does", "for", "from", "had", "has", "have", "how", "i", "if", "in", "into",
    "is", "it", "its", "me", "my", "of", "on", "or", "our", "please", "should", "so", "some",
    "than", "that", "the", "their", "them", "then", "there", "these", "this", "those", "to",
    "tool", "tools", "us", "use", "using", "was", "we", "were", "what", "when", "where", "which",
    "who", "will", "with", "would", "you", "your",
];

/// Whether a (lower-cased, stemmed) word is a stop word.
pub(crate) fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
}

/// The words of `text`, lower-cased and stemmed, in order, with repeats.
pub(crate) fn words(text: &str) -> Vec<String> {
    raw_words(text).iter().map(|w| stem(w)).collect()
}

/// The words of `text`, lower-cased but not stemmed.
pub(crate) fn raw_words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for run in text.split(|c: char| !c.is_alphanumeric()) {
        if run.is_empty() {
            continue;
        }
        split_humps(run, &mut out);
    }
    out
}

fn split_humps(run: &str, out: &mut Vec<String>) {
    let chars: Vec<(usize, char)> = run.char_indices().collect();
    let mut start = 0;
    for k in 1..chars.len() {
        let (i, c) = chars[k];
        let prev = chars[k - 1].1;
        let next = chars.get(k + 1).map(|&(_, n)| n);
        let hump = c.is_uppercase()
            && (prev.is_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_uppercase() && next.is_some_and(char::is_lowercase)));
        if hump {
            push_word(&run[start..i], out);
            start = i;
        }
    }
    push_word(&run[start..], out);
}

fn push_word(word: &str, out: &mut Vec<String>) {
    if !word.is_empty() {
        out.push(word.to_lowercase());
    }
}

/// The light plural rule.
pub(crate) fn stem(word: &str) -> String {
    let n = word.chars().count();
    if n <= 3 || !word.is_ascii() {
        return word.to_owned();
    }
    if let Some(base) = word.strip_suffix("ies") {
        return format!("{base}y");
    }
    if word.ends_with("sses")
        || word.ends_with("shes")
        || word.ends_with("ches")
        || word.ends_with("xes")
    {
        return word[..word.len() - 2].to_owned();
    }
    if word.ends_with('s')
        && !word.ends_with("ss")
        && !word.ends_with("us")
        && !word.ends_with("is")
    {
        return word[..word.len() - 1].to_owned();
    }
    word.to_owned()
}

/// The words of a query: distinct, sorted, stop words removed.
pub(crate) fn query_words(query: &str) -> Vec<String> {
    let set: BTreeSet<String> = raw_words(query)
        .iter()
        .filter(|w| !is_stop_word(w))
        .map(|w| stem(w))
        .filter(|w| !is_stop_word(w))
        .collect();
    set.into_iter().collect()
}

/// A BM25 index over the documents of a catalog.
#[derive(Debug, Clone, Default)]
pub(crate) struct Index {
    /// Per document: weighted term frequencies.
    docs: Vec<BTreeMap<String, u32>>,
    /// Per document: weighted length.
    lengths: Vec<u32>,
    /// Documents containing each term.
    df: BTreeMap<String, u32>,
    avg_len: f64,
}

/// One document's fields.
pub(crate) struct Fields<'a> {
    pub(crate) name: &'a [&'a str],
    pub(crate) description: &'a str,
    pub(crate) tags: &'a [String],
}

impl Index {
    pub(crate) fn build<'a>(documents: impl IntoIterator<Item = Fields<'a>>) -> Index {
        let mut index = Index::default();
        for doc in documents {
            let mut tf: BTreeMap<String, u32> = BTreeMap::new();
            let mut len = 0;
            for part in doc.name {
                for w in words(part) {
                    *tf.entry(w).or_default() += NAME_WEIGHT;
                    len += NAME_WEIGHT;
                }
            }
            for w in words(doc.description)
                .into_iter()
                .chain(doc.tags.iter().flat_map(|t| words(t)))
            {
                *tf.entry(w).or_default() += 1;
                len += 1;
            }
            for term in tf.keys() {
                *index.df.entry(term.clone()).or_default() += 1;
            }
            index.docs.push(tf);
            index.lengths.push(len);
        }
        let total: u64 = index.lengths.iter().map(|&l| u64::from(l)).sum();
        index.avg_len = if index.docs.is_empty() {
            0.0
        } else {
            total as f64 / index.docs.len() as f64
        };
        index
    }

    /// Scores every document against the query words; returns `(document, score)` for the
    /// documents with a positive score, in document order.
    pub(crate) fn score(&self, query: &[String]) -> Vec<(usize, f64)> {
        let n = self.docs.len() as f64;
        let idf: Vec<(&str, f64)> = query
            .iter()
            .filter_map(|term| {
                let df = f64::from(*self.df.get(term)?);
                Some((term.as_str(), (1.0 + (n - df + 0.5) / (df + 0.5)).ln()))
            })
            .collect();
        if idf.is_empty() {
            return Vec::new();
        }
        let mut scored = Vec::new();
        for (i, tf) in self.docs.iter().enumerate() {
            let norm =
                1.0 - B + B * f64::from(self.lengths[i]) / self.avg_len.max(f64::MIN_POSITIVE);
            let mut score = 0.0;
            let mut matched = false;
            for &(term, idf) in &idf {
                if let Some(&f) = tf.get(term) {
                    let f = f64::from(f);
                    score += idf * f * (K1 + 1.0) / (f + K1 * norm);
                    matched = true;
                }
            }
            if matched {
                let rounded = (score * 10_000.0).round() / 10_000.0;
                scored.push((i, rounded.max(0.0001)));
            }
        }
        scored
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_sorted_for_binary_search() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn words_split_humps_and_stem() {
        assert_eq!(words("getUserById"), ["get", "user", "by", "id"]);
        assert_eq!(
            words("HTMLParser list_issues"),
            ["html", "parser", "list", "issue"]
        );
        assert_eq!(
            words("read-file v2 entries status classes"),
            ["read", "file", "v2", "entry", "status", "class"]
        );
        assert_eq!(words("Übersetzt größe"), ["übersetzt", "größe"]);
        assert_eq!(query_words("the issues of the repo"), ["issue", "repo"]);
    }

    #[test]
    fn bm25_prefers_matches_and_skips_non_matches() {
        let names = [
            ["github", "create_issue"],
            ["github", "list_repos"],
            ["fs", "read_file"],
        ];
        let descs = [
            "Create an issue.",
            "List repositories.",
            "Read a file from disk.",
        ];
        let index = Index::build((0..3).map(|i| Fields {
            name: &names[i],
            description: descs[i],
            tags: &[],
        }));
        let scores = index.score(&query_words("read the file"));
        assert_eq!(scores.len(), 1);
        assert_eq!(scores[0].0, 2);
        assert!(index.score(&query_words("weather in lisbon")).is_empty());
    }
}
