//! Structural comparison of JSON values with exact decimal numbers.
//!
//! Fixture numbers are compared by their exact decimal value, not by lexeme and not through
//! `f64`: `1.0`, `1` and `1e0` are equal, `0.1` and `0.1000000000000000001` are not, and the
//! sign of zero is significant (`-0` differs from `0`, as GCF's round-trip rule demands).
//! Object members are compared as sets; array elements in order.

use serde_json::Value;

/// Returns `None` when `actual` equals `expected`, otherwise a description of the first
/// difference, prefixed with its JSON path (`$.orders[0].total`).
pub fn json_difference(expected: &Value, actual: &Value) -> Option<String> {
    let mut path = String::from("$");
    difference_at(&mut path, expected, actual, true)
}

/// [`json_difference`] where the sign of zero does not count (`-0` equals `0`): for codecs
/// whose specification makes them the same value (GCF from v3.5).
pub fn json_difference_unsigned_zero(expected: &Value, actual: &Value) -> Option<String> {
    let mut path = String::from("$");
    difference_at(&mut path, expected, actual, false)
}

/// Whether two JSON values are equal under the rules of this module.
pub fn json_eq(expected: &Value, actual: &Value) -> bool {
    json_difference(expected, actual).is_none()
}

fn difference_at(
    path: &mut String,
    expected: &Value,
    actual: &Value,
    signed_zero: bool,
) -> Option<String> {
    match (expected, actual) {
        (Value::Null, Value::Null) => None,
        (Value::Bool(a), Value::Bool(b)) if a == b => None,
        (Value::String(a), Value::String(b)) if a == b => None,
        (Value::Number(a), Value::Number(b)) => {
            let (a, b) = (a.to_string(), b.to_string());
            if numbers_equal(&a, &b) || (!signed_zero && is_zero(&a) && is_zero(&b)) {
                None
            } else {
                Some(format!("{path}: expected number {a}, got {b}"))
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            if a.len() != b.len() {
                return Some(format!(
                    "{path}: expected an array of {} elements, got {}",
                    a.len(),
                    b.len()
                ));
            }
            a.iter().zip(b).enumerate().find_map(|(i, (x, y))| {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                let found = difference_at(path, x, y, signed_zero);
                path.truncate(len);
                found
            })
        }
        (Value::Object(a), Value::Object(b)) => {
            if let Some(key) = a.keys().find(|k| !b.contains_key(*k)) {
                return Some(format!("{path}: missing member {key:?}"));
            }
            if let Some(key) = b.keys().find(|k| !a.contains_key(*k)) {
                return Some(format!("{path}: unexpected member {key:?}"));
            }
            a.iter().find_map(|(key, x)| {
                let len = path.len();
                push_key(path, key);
                let found = difference_at(path, x, &b[key], signed_zero);
                path.truncate(len);
                found
            })
        }
        _ => Some(format!(
            "{path}: expected {}, got {}",
            describe(expected),
            describe(actual)
        )),
    }
}

fn push_key(path: &mut String, key: &str) {
    let simple = !key.is_empty()
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !key.starts_with(|c: char| c.is_ascii_digit());
    if simple {
        path.push('.');
        path.push_str(key);
    } else {
        path.push_str(&format!("[{key:?}]"));
    }
}

fn describe(value: &Value) -> String {
    const MAX: usize = 60;
    let text = value.to_string();
    let kind = match value {
        Value::Null => return "null".to_owned(),
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    if text.chars().count() > MAX {
        let cut: String = text.chars().take(MAX).collect();
        format!("{kind} {cut}…")
    } else {
        format!("{kind} {text}")
    }
}

/// An exact decimal: `(-1)^negative × digits × 10^exponent`, where `digits` has neither leading
/// nor trailing zeros (zero is the empty digit string with exponent 0).
#[derive(Debug, PartialEq, Eq)]
struct Decimal {
    negative: bool,
    digits: String,
    exponent: i64,
}

fn parse_decimal(lexeme: &str) -> Option<Decimal> {
    let (negative, rest) = match lexeme.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, lexeme),
    };
    let (mantissa, exp) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let (int, frac) = match mantissa.split_once('.') {
        Some((int, frac)) => (int, frac),
        None => (mantissa, ""),
    };
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int.is_empty() || !all_digits(int) || !all_digits(frac) {
        return None;
    }
    let mut exponent: i64 = match exp {
        Some(e) => {
            let e = e.strip_prefix('+').unwrap_or(e);
            if e.is_empty() || !all_digits(e.trim_start_matches('-')) {
                return None;
            }
            e.parse().ok()?
        }
        None => 0,
    };
    exponent = exponent.checked_sub(i64::try_from(frac.len()).ok()?)?;
    let joined = format!("{int}{frac}");
    let trimmed = joined.trim_start_matches('0');
    let significant = trimmed.trim_end_matches('0');
    if significant.is_empty() {
        return Some(Decimal {
            negative,
            digits: String::new(),
            exponent: 0,
        });
    }
    exponent = exponent.checked_add(i64::try_from(trimmed.len() - significant.len()).ok()?)?;
    Some(Decimal {
        negative,
        digits: significant.to_owned(),
        exponent,
    })
}

fn is_zero(lexeme: &str) -> bool {
    parse_decimal(lexeme).is_some_and(|d| d.digits.is_empty())
}

fn numbers_equal(a: &str, b: &str) -> bool {
    match (parse_decimal(a), parse_decimal(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn num(s: &str) -> Value {
        serde_json::from_str(s).unwrap()
    }

    #[test]
    fn numbers_compare_by_exact_decimal_value() {
        assert!(numbers_equal("1", "1.0"));
        assert!(numbers_equal("1", "1e0"));
        assert!(numbers_equal("100", "1E+2"));
        assert!(numbers_equal("6.022E+23", "6.022e23"));
        assert!(numbers_equal("0.5", "5e-1"));
        assert!(numbers_equal("0", "0.000"));
        assert!(numbers_equal("-0", "-0.0"));
        assert!(!numbers_equal("-0", "0"));
        assert!(!numbers_equal("0.1", "0.1000000000000000001"));
        assert!(!numbers_equal(
            "18446744073709551616",
            "18446744073709551617"
        ));
        assert!(numbers_equal(
            "18446744073709551616",
            "1.8446744073709551616e19"
        ));
        assert!(!numbers_equal("1", "-1"));
    }

    #[test]
    fn lexemes_survive_fixture_parsing() {
        // The runner relies on serde_json's arbitrary_precision feature.
        assert_eq!(num("-0").to_string(), "-0");
        assert_eq!(
            num("123456789012345678901234567890").to_string(),
            "123456789012345678901234567890"
        );
        assert!(!json_eq(&num("-0"), &num("0")));
        assert!(json_difference_unsigned_zero(&num("-0"), &num("0")).is_none());
        assert!(json_difference_unsigned_zero(&num("-0.0"), &num("1")).is_some());
    }

    #[test]
    fn reports_the_path_of_the_first_difference() {
        let expected = json!({"a": [1, {"b c": "x"}], "d": true});
        let actual = json!({"a": [1, {"b c": "y"}], "d": true});
        assert_eq!(
            json_difference(&expected, &actual).unwrap(),
            r#"$.a[1]["b c"]: expected string "x", got string "y""#
        );
        assert_eq!(
            json_difference(&json!({"a": 1}), &json!({})).unwrap(),
            r#"$: missing member "a""#
        );
        assert_eq!(
            json_difference(&json!({}), &json!({"z": 1})).unwrap(),
            r#"$: unexpected member "z""#
        );
        assert_eq!(
            json_difference(&json!([1]), &json!([1, 2])).unwrap(),
            "$: expected an array of 1 elements, got 2"
        );
        assert_eq!(
            json_difference(&json!("1"), &num("1")).unwrap(),
            r#"$: expected string "1", got number 1"#
        );
        assert_eq!(
            json_difference(&Value::Null, &json!("")).unwrap(),
            r#"$: expected null, got string """#
        );
    }

    #[test]
    fn member_order_does_not_matter() {
        let a: Value = serde_json::from_str(r#"{"x":1,"y":2}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"y":2,"x":1.0}"#).unwrap();
        assert!(json_eq(&a, &b));
    }
}
