//! Comparing JSON values: exactly, or as JSON numbers (`1` and `1.0` equal), and naming the
//! first place where two values differ.

use std::fmt::Write as _;

use serde_json::Value;

/// How two numbers must agree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Numbers {
    /// The same `serde_json::Number` (`1` and `1.0` differ: one is an integer).
    Exact,
    /// The same numeric value (`1`, `1.0` and `1e0` agree).
    Value,
}

/// The first difference between `expected` and `actual` as `path: what`, or `None` when
/// they are equal. Object members are compared as sets, arrays in order.
pub(crate) fn first_difference(
    expected: &Value,
    actual: &Value,
    numbers: Numbers,
) -> Option<String> {
    let mut path = String::new();
    diff(expected, actual, numbers, true, &mut path)
}

/// The first part of `input` that `output` lost or changed (numbers compared by value), or
/// `None`. Members `output` adds (defaults of a typed model) are not losses.
pub(crate) fn first_loss(input: &Value, output: &Value) -> Option<String> {
    let mut path = String::new();
    diff(input, output, Numbers::Value, false, &mut path)
}

fn diff(
    expected: &Value,
    actual: &Value,
    numbers: Numbers,
    extra: bool,
    path: &mut String,
) -> Option<String> {
    let at = |path: &str| {
        if path.is_empty() {
            "/".to_owned()
        } else {
            path.to_owned()
        }
    };
    match (expected, actual) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, value) in a {
                let len = path.len();
                path.push('/');
                path.push_str(&escape_pointer(key));
                let found = match b.get(key) {
                    None => Some(format!("{}: missing (expected {})", path, short(value))),
                    Some(other) => diff(value, other, numbers, extra, path),
                };
                path.truncate(len);
                if found.is_some() {
                    return found;
                }
            }
            if !extra {
                return None;
            }
            b.iter()
                .find(|(key, _)| !a.contains_key(*key))
                .map(|(key, value)| {
                    format!(
                        "{}/{}: unexpected member ({})",
                        path,
                        escape_pointer(key),
                        short(value)
                    )
                })
        }
        (Value::Array(a), Value::Array(b)) => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                let len = path.len();
                let _ = write!(path, "/{i}");
                let found = diff(x, y, numbers, extra, path);
                path.truncate(len);
                if found.is_some() {
                    return found;
                }
            }
            (a.len() != b.len())
                .then(|| format!("{}: {} elements, expected {}", at(path), b.len(), a.len()))
        }
        (Value::Number(a), Value::Number(b)) => {
            let equal = match numbers {
                Numbers::Exact => a == b,
                Numbers::Value => numbers_equal(a, b),
            };
            (!equal).then(|| format!("{}: {} became {}", at(path), a, b))
        }
        (a, b) if a == b => None,
        (a, b) => Some(format!("{}: {} became {}", at(path), short(a), short(b))),
    }
}

/// Whether `b` carries the value of `a`, whatever its spelling or type: the same decimal value
/// exactly (`1`, `1.0` and `1e0`; `12345678901234567890123` and `1.2345678901234567890123e+22`),
/// or, for a fraction or exponent literal `a`, the same double (`0.10000000000000001` and
/// `0.1`). An integer literal must keep every digit, a literal no double can hold (`1e-400`,
/// `1e400`) must keep its exact value, and the sign of zero counts (`-0` is not `0`).
pub(crate) fn numbers_equal(a: &serde_json::Number, b: &serde_json::Number) -> bool {
    if a == b {
        return true;
    }
    let (ta, tb) = (a.to_string(), b.to_string());
    let (Some(da), Some(db)) = (Decimal::parse(&ta), Decimal::parse(&tb)) else {
        return false;
    };
    if da == db {
        return true;
    }
    let integer_literal = !ta.contains(['.', 'e', 'E']);
    if integer_literal {
        return false;
    }
    match (ta.parse::<f64>(), tb.parse::<f64>()) {
        // Only a literal a double holds: not one that overflows or underflows to zero.
        (Ok(x), Ok(y)) => x.is_finite() && (x != 0.0 || da.is_zero()) && x.to_bits() == y.to_bits(),
        _ => false,
    }
}

/// A JSON number's exact value: sign, significant digits without leading or trailing zeros,
/// and the power of ten of the last digit. Zero has no digits (its sign is kept).
#[derive(Debug, PartialEq, Eq)]
struct Decimal {
    negative: bool,
    digits: String,
    exponent: i128,
}

impl Decimal {
    fn parse(text: &str) -> Option<Decimal> {
        let (negative, rest) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (mantissa, exponent) = match rest.find(['e', 'E']) {
            Some(i) => (&rest[..i], rest[i + 1..].parse::<i128>().ok()?),
            None => (rest, 0),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        if int.is_empty() || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
            return None;
        }
        let all: String = int.chars().chain(frac.chars()).collect();
        let digits = all.trim_start_matches('0');
        let trimmed = digits.trim_end_matches('0');
        let exponent = exponent - frac.len() as i128 + (digits.len() - trimmed.len()) as i128;
        Some(Decimal {
            negative,
            digits: trimmed.to_owned(),
            exponent: if trimmed.is_empty() { 0 } else { exponent },
        })
    }

    fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }
}

/// A JSON Pointer reference token for `key` (RFC 6901: `~` is `~0`, `/` is `~1`).
fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// A value in a few dozen characters, for messages.
fn short(value: &Value) -> String {
    let text = match value {
        Value::Array(a) => format!("an array of {}", a.len()),
        Value::Object(o) => format!("an object of {} members", o.len()),
        other => other.to_string(),
    };
    if text.chars().count() > 60 {
        let cut: String = text.chars().take(57).collect();
        format!("{cut}...")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_the_first_difference() {
        let a = json!({"a": [1, {"b/c": "x"}], "d": 1.0});
        assert_eq!(first_difference(&a, &a.clone(), Numbers::Exact), None);
        let b = json!({"a": [1, {"b/c": "y"}], "d": 1.0});
        assert_eq!(
            first_difference(&a, &b, Numbers::Exact).as_deref(),
            Some("/a/1/b~1c: \"x\" became \"y\"")
        );
        let c = json!({"a": [1, {"b/c": "x"}], "d": 1});
        assert_eq!(
            first_difference(&a, &c, Numbers::Exact).as_deref(),
            Some("/d: 1.0 became 1")
        );
        assert_eq!(first_difference(&a, &c, Numbers::Value), None);
        let d = json!({"a": [1], "d": 1.0, "e": null});
        assert_eq!(
            first_difference(&a, &d, Numbers::Exact).as_deref(),
            Some("/a: 1 elements, expected 2")
        );
        let e = json!({"a": [1, {"b/c": "x"}], "d": 1.0, "e": null});
        assert_eq!(
            first_difference(&a, &e, Numbers::Exact).as_deref(),
            Some("/e: unexpected member (null)")
        );
        assert_eq!(
            first_difference(&e, &a, Numbers::Exact).as_deref(),
            Some("/e: missing (expected null)")
        );
        assert_eq!(
            first_difference(&json!(1), &json!("1"), Numbers::Value).as_deref(),
            Some("/: 1 became \"1\"")
        );
    }

    #[test]
    fn losses_ignore_added_defaults() {
        let input = json!({"a": [{"b": 1}], "c": "x"});
        let output = json!({"a": [{"b": 1.0, "d": 0}], "c": "x", "e": []});
        assert_eq!(first_loss(&input, &output), None);
        let lossy = json!({"a": [{"d": 0}], "c": "x"});
        assert_eq!(
            first_loss(&input, &lossy).as_deref(),
            Some("/a/0/b: missing (expected 1)")
        );
    }

    #[test]
    fn compares_numbers_by_value() {
        let n = |text: &str| serde_json::from_str::<serde_json::Number>(text).unwrap();
        assert!(numbers_equal(&n("1"), &n("1.0")));
        assert!(numbers_equal(&n("-0.5"), &n("-5e-1")));
        assert!(!numbers_equal(&n("1"), &n("1.5")));
        assert!(numbers_equal(
            &n("18446744073709551615"),
            &n("18446744073709551615")
        ));
        // Every digit of an integer counts; its exact value may be spelled as a float.
        let big = n("12345678901234567890123");
        assert!(numbers_equal(&big, &n("1.2345678901234567890123e+22")));
        assert!(!numbers_equal(&big, &n("1.2345678901234568e22")));
        assert!(!numbers_equal(&big, &n("12345678901234568000000")));
        // A fraction survives as the same double; one no double holds must stay exact.
        assert!(numbers_equal(&n("0.10000000000000001"), &n("0.1")));
        assert!(!numbers_equal(&n("1e-400"), &n("0")));
        assert!(numbers_equal(&n("1e-400"), &n("10e-401")));
        assert!(!numbers_equal(&n("1e400"), &n("1e308")));
        // The sign of zero is kept.
        assert!(!numbers_equal(&n("-0"), &n("0")));
        assert!(numbers_equal(&n("-0"), &n("-0.0")));
        assert!(numbers_equal(&n("0.0"), &n("0")));
    }
}
