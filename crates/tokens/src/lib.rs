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
//! # Ok::<(), agentwire_tokens::UnknownTokenizer>(())
//! ```
#![deny(missing_docs)]
#![warn(clippy::unwrap_used)]

use std::fmt;
use std::str::FromStr;

use tiktoken_rs::CoreBPE;

/// A byte-pair encoding used to count tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Tokenizer {
    /// `cl100k_base`: GPT-4, GPT-3.5-turbo and the text-embedding-3 models.
    Cl100kBase,
    /// `o200k_base`: GPT-4o, GPT-4.1, the o-series and GPT-5.
    O200kBase,
}

impl Tokenizer {
    /// Every supported tokenizer, in a stable order.
    pub const ALL: [Tokenizer; 2] = [Tokenizer::Cl100kBase, Tokenizer::O200kBase];

    /// The encoding's canonical name, as OpenAI spells it (`cl100k_base`, `o200k_base`).
    pub fn name(self) -> &'static str {
        match self {
            Tokenizer::Cl100kBase => "cl100k_base",
            Tokenizer::O200kBase => "o200k_base",
        }
    }

    /// The short name used on command lines (`cl100k`, `o200k`).
    pub fn short_name(self) -> &'static str {
        match self {
            Tokenizer::Cl100kBase => "cl100k",
            Tokenizer::O200kBase => "o200k",
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
            Tokenizer::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
            Tokenizer::O200kBase => tiktoken_rs::o200k_base_singleton(),
        }
    }
}

impl Default for Tokenizer {
    /// `cl100k_base`, the encoding most token budgets in the wild are quoted in.
    fn default() -> Self {
        Tokenizer::Cl100kBase
    }
}

impl fmt::Display for Tokenizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Tokenizer {
    type Err = UnknownTokenizer;

    /// Accepts the canonical and the short names: `cl100k_base`, `cl100k`, `o200k_base`, `o200k`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Tokenizer::ALL
            .into_iter()
            .find(|t| s == t.name() || s == t.short_name())
            .ok_or_else(|| UnknownTokenizer(s.to_owned()))
    }
}

/// Counts the tokens of `text` with `tokenizer`; the same as [`Tokenizer::count`].
pub fn count(tokenizer: Tokenizer, text: &str) -> usize {
    tokenizer.count(text)
}

/// The error returned when parsing a [`Tokenizer`] from an unknown name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownTokenizer(String);

impl fmt::Display for UnknownTokenizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown tokenizer `{}` (expected one of: cl100k, cl100k_base, o200k, o200k_base)",
            self.0
        )
    }
}

impl std::error::Error for UnknownTokenizer {}

#[cfg(test)]
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
            for t in Tokenizer::ALL {
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
        for t in Tokenizer::ALL {
            assert_eq!(t.name().parse::<Tokenizer>(), Ok(t));
            assert_eq!(t.short_name().parse::<Tokenizer>(), Ok(t));
            assert_eq!(t.to_string(), t.name());
        }
        let err = "gpt2".parse::<Tokenizer>().unwrap_err();
        assert!(err.to_string().contains("unknown tokenizer `gpt2`"));
        assert_eq!(Tokenizer::default(), Tokenizer::Cl100kBase);
    }
}

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
