//! Building blocks of the corpus generator: a seeded random source, dates, names and text.

use serde_json::{Map, Value};

/// The seeded xorshift64* generator of the benchmarks' data sets: the same seed gives the same
/// corpus on every machine and every toolchain (every seed here is non-zero).
pub(crate) use agentwire_benchmarks::Rng;

/// An object from `(key, value)` pairs, keys in the given order.
pub(crate) fn obj<const N: usize>(pairs: [(&str, Value); N]) -> Value {
    let mut map = Map::new();
    for (key, value) in pairs {
        map.insert(key.to_owned(), value);
    }
    Value::Object(map)
}

/// An object from pairs, leaving out the `None` values (optional fields).
pub(crate) fn obj_opt<const N: usize>(pairs: [(&str, Option<Value>); N]) -> Value {
    let mut map = Map::new();
    for (key, value) in pairs {
        if let Some(value) = value {
            map.insert(key.to_owned(), value);
        }
    }
    Value::Object(map)
}

/// Days since 1970-01-01 to a civil date (proleptic Gregorian), after H. Hinnant.
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Seconds since the corpus epoch, 2025-06-02T00:00:00Z.
pub(crate) const EPOCH: i64 = 1_748_822_400;

/// `YYYY-MM-DDTHH:MM:SSZ` for `seconds` since 1970.
pub(crate) fn timestamp(seconds: i64) -> String {
    let (y, m, d) = civil(seconds.div_euclid(86_400));
    let s = seconds.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` for `millis` since 1970.
pub(crate) fn timestamp_millis(millis: i64) -> String {
    let text = timestamp(millis.div_euclid(1000));
    format!(
        "{}.{:03}Z",
        &text[..text.len() - 1],
        millis.rem_euclid(1000)
    )
}

/// `YYYY-MM-DD` for `days` since 1970.
pub(crate) fn date(days: i64) -> String {
    let (y, m, d) = civil(days);
    format!("{y:04}-{m:02}-{d:02}")
}

pub(crate) const FIRST: &[&str] = &[
    "Alice", "Bob", "Carol", "Dmitri", "Eun-ji", "Farah", "Gustavo", "Hana", "Ivan", "Jamal",
    "Kiri", "Lena", "Mateo", "Nia", "Oskar", "Priya", "Zoë", "José", "Ngozi", "Wei",
];

pub(crate) const LAST: &[&str] = &[
    "Chen", "Martinez", "Okafor", "Novak", "Kim", "Haddad", "Silva", "Tanaka", "Petrov", "Johnson",
    "Walker", "Schmidt", "Rossi", "Singh", "Larsen", "Dubois", "O'Brien", "Müller",
];

/// A person: (display name, lower-case login).
pub(crate) fn person(rng: &mut Rng) -> (String, String) {
    let first = rng.pick(FIRST);
    let last = rng.pick(LAST);
    let login = format!("{}{}", ascii_lower(first), ascii_lower(last));
    (format!("{first} {last}"), login)
}

/// Lower case with the non-ASCII letters the name lists use folded to ASCII, and with
/// apostrophes and hyphens dropped: good enough for logins and e-mail addresses.
pub(crate) fn ascii_lower(text: &str) -> String {
    text.chars()
        .filter_map(|c| match c {
            'ë' => Some('e'),
            'é' => Some('e'),
            'ü' => Some('u'),
            '\'' | '-' | ' ' => None,
            c => Some(c.to_ascii_lowercase()),
        })
        .collect()
}

/// A sentence of `words` words drawn from a technical vocabulary, capitalised, with a full
/// stop.
pub(crate) fn sentence(rng: &mut Rng, words: usize) -> String {
    const WORDS: &[&str] = &[
        "the",
        "request",
        "handler",
        "returns",
        "a",
        "cached",
        "response",
        "when",
        "token",
        "expires",
        "during",
        "retry",
        "and",
        "the",
        "queue",
        "backs",
        "up",
        "under",
        "load",
        "with",
        "stale",
        "entries",
        "in",
        "the",
        "index",
        "after",
        "deploy",
        "which",
        "breaks",
        "pagination",
        "for",
        "large",
        "accounts",
        "on",
        "mobile",
        "clients",
        "because",
        "of",
        "an",
        "off-by-one",
        "in",
        "cursor",
        "handling",
        "so",
        "users",
        "see",
        "duplicate",
        "rows",
        "until",
        "refresh",
        "timeout",
        "config",
        "is",
        "ignored",
        "by",
        "worker",
    ];
    let mut text = String::new();
    for i in 0..words {
        let word = rng.pick(WORDS);
        if i == 0 {
            let mut chars = word.chars();
            if let Some(c) = chars.next() {
                text.extend(c.to_uppercase());
                text.push_str(chars.as_str());
            }
        } else {
            text.push(' ');
            text.push_str(word);
        }
    }
    text.push('.');
    text
}
