//! Token counting for the text an agent reads.
//!
//! Wire formats such as GCF and GCX1 exist to cut the tokens a tool response costs, so the
//! workspace measures savings in tokens, not bytes. This crate counts them with the two
//! OpenAI byte-pair encodings that matter for current models:
//!
//! | [`Tokenizer`] | encoding | models |
//! |---|---|---|
//! | [`Tokenizer::Cl100kBase`] | `cl100k_base` | GPT-4, GPT-3.5, text-embedding-3 |
//! | [`Tokenizer::O200kBase`] | `o200k_base` | GPT-4o, GPT-4.1, o-series, GPT-5 |
//!
//! The rank tables are compiled into the binary by [`tiktoken-rs`](https://docs.rs/tiktoken-rs),
//! so counting works offline. Loading a table costs tens of milliseconds; each is loaded at most
//! once per process, on first use, and then shared by every thread.
//!
//! # Features
//!
//! Each table adds to the binary what it weighs, so each sits behind a feature of its own, both
//! on by default. A variant of [`Tokenizer`] exists only with its feature; parsing the name of a
//! tokenizer whose feature is off is an error (`tokenizer_disabled`) that names the feature.
//!
//! | feature | tokenizer | adds to a release binary |
//! |---|---|---|
//! | `cl100k` | [`Tokenizer::Cl100kBase`] | about 1.7 MB |
//! | `o200k` | [`Tokenizer::O200kBase`] | about 3.6 MB |
//!
//! At least one of them must be enabled.
//!
//! Text is encoded as ordinary text: a string such as `<|endoftext|>` inside a tool response is
//! counted as the characters it is made of, exactly as a model's tokenizer sees untrusted input.
//!
//! # Example
//!
//! ```
//! use agentwire_tokens::Tokenizer;
//!
//! assert_eq!(Tokenizer::Cl100kBase.count("tiktoken is great!"), 6);
//! assert_eq!(agentwire_tokens::count(Tokenizer::O200kBase, "hello world"), 2);
//!
//! let tokenizer: Tokenizer = "o200k".parse()?;
//! assert_eq!(tokenizer.name(), "o200k_base");
//! # Ok::<(), agentwire_tokens::Error>(())
//! ```
#![deny(missing_docs)]
#![warn(clippy::unwrap_used)]

#[cfg(not(any(feature = "cl100k", feature = "o200k")))]
compile_error!("agentwire-tokens needs at least one of its features `cl100k` and `o200k`");

use std::fmt;
use std::str::FromStr;

use tiktoken_rs::CoreBPE;

/// A byte-pair encoding used to count tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Tokenizer {
    /// `cl100k_base`: GPT-4, GPT-3.5-turbo and the text-embedding-3 models (feature `cl100k`).
    #[cfg(feature = "cl100k")]
    Cl100kBase,
    /// `o200k_base`: GPT-4o, GPT-4.1, the o-series and GPT-5 (feature `o200k`).
    #[cfg(feature = "o200k")]
    O200kBase,
}

/// Every tokenizer this crate knows: canonical name, short name and the feature that enables it,
/// whether or not the feature is on, so that an unavailable one gets a precise error.
const KNOWN: [(&str, &str, &str); 2] = [
    ("cl100k_base", "cl100k", "cl100k"),
    ("o200k_base", "o200k", "o200k"),
];

impl Tokenizer {
    /// Every tokenizer enabled in this build, in a stable order (`cl100k_base` first).
    pub const ALL: &'static [Tokenizer] = &[
        #[cfg(feature = "cl100k")]
        Tokenizer::Cl100kBase,
        #[cfg(feature = "o200k")]
        Tokenizer::O200kBase,
    ];

    /// The encoding's canonical name, as OpenAI spells it (`cl100k_base`, `o200k_base`).
    pub fn name(self) -> &'static str {
        KNOWN[self.index()].0
    }

    /// The short name used on command lines (`cl100k`, `o200k`).
    pub fn short_name(self) -> &'static str {
        KNOWN[self.index()].1
    }

    fn index(self) -> usize {
        match self {
            #[cfg(feature = "cl100k")]
            Tokenizer::Cl100kBase => 0,
            #[cfg(feature = "o200k")]
            Tokenizer::O200kBase => 1,
        }
    }

    /// Counts the tokens of `text`.
    ///
    /// The first call for a tokenizer loads its rank table (tens of milliseconds); later calls
    /// from any thread reuse it.
    pub fn count(self, text: &str) -> usize {
        if text.is_empty() {
            return 0;
        }
        self.bpe().encode_ordinary(text).len()
    }

    /// Encodes `text` into token ids, for callers that need more than the count.
    pub fn encode(self, text: &str) -> Vec<u32> {
        self.bpe().encode_ordinary(text)
    }

    /// Loads the rank table now instead of on first use, for example before timing.
    pub fn preload(self) {
        let _ = self.bpe();
    }

    fn bpe(self) -> &'static CoreBPE {
        match self {
            #[cfg(feature = "cl100k")]
            Tokenizer::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
            #[cfg(feature = "o200k")]
            Tokenizer::O200kBase => tiktoken_rs::o200k_base_singleton(),
        }
    }
}

impl Default for Tokenizer {
    /// `cl100k_base`, the encoding most token budgets in the wild are quoted in; `o200k_base`
    /// when the `cl100k` feature is off.
    fn default() -> Self {
        Tokenizer::ALL[0]
    }
}

impl fmt::Display for Tokenizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Tokenizer {
    type Err = Error;

    /// Accepts the canonical and the short names: `cl100k_base`, `cl100k`, `o200k_base`, `o200k`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if let Some(t) = Tokenizer::ALL
            .iter()
            .find(|t| s == t.name() || s == t.short_name())
        {
            return Ok(*t);
        }
        let kind = match KNOWN.iter().find(|k| s == k.0 || s == k.1) {
            Some(&(name, _, feature)) => ErrorKind::TokenizerDisabled { name, feature },
            None => ErrorKind::UnknownTokenizer(s.to_owned()),
        };
        Err(Error(Box::new(kind)))
    }
}

/// Counts the tokens of `text` with `tokenizer`; the same as [`Tokenizer::count`].
pub fn count(tokenizer: Tokenizer, text: &str) -> usize {
    tokenizer.count(text)
}

/// The error of this crate: a tokenizer name that does not parse.
///
/// It has the shape of every agentwire error (see the workspace's `docs/errors.md`): a stable
/// [`code`](Error::code), a [`kind`](Error::kind) to match on, and `line`/`column`, which are
/// always `None` here since no input text is being read. It displays as `code: message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(Box<ErrorKind>);

/// The former name of [`Error`].
#[deprecated(since = "0.2.0", note = "renamed to `Error`")]
pub type UnknownTokenizer = Error;

/// What went wrong, one variant per [`Error::code`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// `unknown_tokenizer`: the name is none of `cl100k`, `cl100k_base`, `o200k`, `o200k_base`.
    UnknownTokenizer(String),
    /// `tokenizer_disabled`: a known tokenizer whose cargo feature is off in this build.
    TokenizerDisabled {
        /// The tokenizer's canonical name.
        name: &'static str,
        /// The feature of this crate that enables it.
        feature: &'static str,
    },
}

impl ErrorKind {
    /// The stable code of this kind.
    pub fn code(&self) -> &'static str {
        match self {
            ErrorKind::UnknownTokenizer(_) => "unknown_tokenizer",
            ErrorKind::TokenizerDisabled { .. } => "tokenizer_disabled",
        }
    }
}

impl Error {
    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.0
    }

    /// The stable error code: `unknown_tokenizer` or `tokenizer_disabled`.
    pub fn code(&self) -> &'static str {
        self.0.code()
    }

    /// Always `None`: no input text is read. Present for the workspace's one error shape.
    pub fn line(&self) -> Option<u64> {
        None
    }

    /// Always `None`, as [`Error::line`].
    pub fn column(&self) -> Option<u64> {
        None
    }

    /// The human text, without the code.
    pub fn message(&self) -> String {
        match &*self.0 {
            ErrorKind::UnknownTokenizer(name) => format!(
                "unknown tokenizer `{name}` (expected one of: cl100k, cl100k_base, o200k, o200k_base)"
            ),
            ErrorKind::TokenizerDisabled { name, feature } => format!(
                "tokenizer `{name}` is not built in: enable the `{feature}` feature of agentwire-tokens"
            ),
        }
    }

    /// Always `false`: nothing is read or written.
    pub fn is_io(&self) -> bool {
        false
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code(), self.message())
    }
}

impl std::error::Error for Error {}

// The counts below need both tables.
#[cfg(all(test, feature = "cl100k", feature = "o200k"))]
mod tests {
    use super::*;

    /// Texts and their token counts as computed by OpenAI's Python `tiktoken` 0.14.0
    /// (`encode_ordinary`), an implementation independent of the one this crate wraps.
    const KNOWN: &[(&str, usize, usize)] = &[
        ("", 0, 0),
        ("hello world", 2, 2),
        ("tiktoken is great!", 6, 6),
        ("GCF profile=generic\nvalue=\"true\"\n", 10, 10),
        (r#"{"id":1,"name":"Alice","tags":["a","b"]}"#, 15, 16),
        ("Größe — 日本語のテキスト 🚀 emoji", 15, 12),
        (
            "    indented\tand\ttabbed\r\n<|endoftext|> stays text",
            16,
            16,
        ),
        ("fn main() {\n    println!(\"{}\", 1 + 2);\n}\n", 14, 14),
    ];

    #[test]
    fn counts_match_python_tiktoken() {
        for &(text, cl100k, o200k) in KNOWN {
            assert_eq!(
                Tokenizer::Cl100kBase.count(text),
                cl100k,
                "cl100k: {text:?}"
            );
            assert_eq!(Tokenizer::O200kBase.count(text), o200k, "o200k: {text:?}");
        }
    }

    #[test]
    fn encode_agrees_with_count() {
        for &(text, ..) in KNOWN {
            for &t in Tokenizer::ALL {
                assert_eq!(t.encode(text).len(), t.count(text));
            }
        }
    }

    #[test]
    fn special_tokens_are_counted_as_text() {
        // As ordinary text `<|endoftext|>` is several tokens, never the single special token.
        assert!(Tokenizer::Cl100kBase.count("<|endoftext|>") > 1);
        assert!(Tokenizer::O200kBase.count("<|endoftext|>") > 1);
    }

    #[test]
    fn shared_across_threads() {
        let counts: Vec<usize> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| s.spawn(|| Tokenizer::O200kBase.count("tiktoken is great!")))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(counts, vec![6; 4]);
    }

    #[test]
    fn names_parse_and_display() {
        for &t in Tokenizer::ALL {
            assert_eq!(t.name().parse::<Tokenizer>(), Ok(t));
            assert_eq!(t.short_name().parse::<Tokenizer>(), Ok(t));
            assert_eq!(t.to_string(), t.name());
        }
        let err = "gpt2".parse::<Tokenizer>().unwrap_err();
        assert_eq!(err.code(), "unknown_tokenizer");
        assert_eq!((err.line(), err.column()), (None, None));
        assert_eq!(
            err.to_string(),
            "unknown_tokenizer: unknown tokenizer `gpt2` (expected one of: cl100k, cl100k_base, \
             o200k, o200k_base)"
        );
        assert_eq!(Tokenizer::default(), Tokenizer::Cl100kBase);
    }
}

// A build with one table: the other's names are known but refused, naming the feature.
#[cfg(all(test, not(all(feature = "cl100k", feature = "o200k"))))]
mod one_table {
    use super::*;

    #[test]
    fn the_missing_table_is_refused_by_name() {
        let (missing, feature) = if cfg!(feature = "cl100k") {
            ("o200k", "o200k")
        } else {
            ("cl100k_base", "cl100k")
        };
        let err = missing.parse::<Tokenizer>().unwrap_err();
        assert_eq!(err.code(), "tokenizer_disabled");
        assert!(err.message().contains(&format!("the `{feature}` feature")));
        assert_eq!(Tokenizer::ALL.len(), 1);
        assert_eq!(Tokenizer::default(), Tokenizer::ALL[0]);
        assert_eq!(Tokenizer::default().count("hello world"), 2);
    }
}

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
