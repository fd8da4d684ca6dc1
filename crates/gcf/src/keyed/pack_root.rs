//! The pack root of a keyed set, `gcf-pack-root-v1` for the generic profile (spec §10a.3),
//! and the canonical number form (§2.3.1, v3.5.3) its records and keyed rows use.

use serde_json::{Number, Value};

use super::KeyedSet;
use crate::error::{Error, ErrorKind, Result};
use crate::lex;

/// The canonical record bytes of `set` (validated by the caller).
pub(super) fn canonical_bytes(set: &KeyedSet) -> Result<Vec<u8>> {
    let mut fields: Vec<&String> = set.fields.iter().collect();
    fields.sort_unstable();
    let mut records = Vec::with_capacity(set.rows.len());
    for row in &set.rows {
        let mut record = String::from("R");
        for field in &fields {
            record.push('\t');
            record.push_str(field);
            record.push('\t');
            write_canonical(&mut record, row.get(field.as_str()).unwrap_or(&Value::Null))?;
        }
        record.push('\n');
        records.push(record);
    }
    records.sort_unstable();
    Ok(records.concat().into_bytes())
}

/// One value of a record: `-` for null, `true`/`false`, the canonical number, a string always
/// quoted with the escapes of §2.2 (so a tab or line end cannot break the record, and the
/// string `"1"` differs from the number `1`).
pub(super) fn canonical_cell(value: &Value) -> Result<String> {
    let mut out = String::new();
    write_canonical(&mut out, value)?;
    Ok(out)
}

fn write_canonical(out: &mut String, value: &Value) -> Result<()> {
    match value {
        Value::Null => out.push('-'),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => write_number(out, n)?,
        Value::String(s) => lex::write_quoted(out, s),
        other => {
            return Err(Error::new(
                ErrorKind::UnsupportedValue,
                format!("a keyed set's values are scalars, not {other}"),
            ))
        }
    }
    Ok(())
}

/// 2^53: from here on a double is written with an exponent (spec §2.3.1, v3.5.3).
const PLAIN_LIMIT: f64 = 9_007_199_254_740_992.0;

/// Writes a number in the canonical form of spec v3.5.3 (§2.3.1): an integer in the signed
/// 64-bit domain as its digits (`out_of_range` outside it); a double as its shortest
/// round-trip digits, plain when `1e-6 <= |x| < 2^53` (`75.0` is `75`), else `d.ddde±x`;
/// negative zero as `0`.
pub(super) fn write_number(out: &mut String, n: &Number) -> Result<()> {
    if let Some(i) = n.as_i64() {
        out.push_str(itoa::Buffer::new().format(i));
        return Ok(());
    }
    if n.is_u64() {
        return Err(Error::new(
            ErrorKind::OutOfRange,
            format!("the integer {n} is outside the signed 64-bit domain (spec §2.3.2)"),
        ));
    }
    let Some(v) = n.as_f64().filter(|v| v.is_finite()) else {
        // Only a number beyond f64 with serde_json's arbitrary_precision.
        return Err(Error::new(
            ErrorKind::OutOfRange,
            format!("the number {n} is outside the numeric domain (spec §2.3.2)"),
        ));
    };
    write_double(out, v);
    Ok(())
}

/// Writes a finite double canonically (see [`write_number`]).
fn write_double(out: &mut String, v: f64) {
    if v == 0.0 {
        out.push('0');
        return;
    }
    let mut buf = zmij::Buffer::new();
    let text = buf.format_finite(v);
    let (negative, text) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    // The shortest digits and the decimal exponent of the first one.
    let (mantissa, exponent) = match text.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (text, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all: String = int.chars().chain(frac.chars()).collect();
    let leading = all.bytes().take_while(|&b| b == b'0').count();
    let digits = all[leading..].trim_end_matches('0');
    // The value is 0.DIGITS × 10^point.
    let point = int.len() as i32 - leading as i32 + exponent;
    if negative {
        out.push('-');
    }
    let magnitude = v.abs();
    if (1e-6..PLAIN_LIMIT).contains(&magnitude) {
        if point <= 0 {
            out.push_str("0.");
            for _ in point..0 {
                out.push('0');
            }
            out.push_str(digits);
        } else {
            let point = point as usize;
            if digits.len() <= point {
                out.push_str(digits);
                for _ in digits.len()..point {
                    out.push('0');
                }
            } else {
                out.push_str(&digits[..point]);
                out.push('.');
                out.push_str(&digits[point..]);
            }
        }
        return;
    }
    out.push_str(&digits[..1]);
    if digits.len() > 1 {
        out.push('.');
        out.push_str(&digits[1..]);
    }
    let e = point - 1;
    out.push('e');
    out.push(if e < 0 { '-' } else { '+' });
    out.push_str(itoa::Buffer::new().format(e.unsigned_abs()));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn number(v: f64) -> String {
        let mut out = String::new();
        write_double(&mut out, v);
        out
    }

    #[test]
    fn canonical_doubles() {
        for (v, text) in [
            (129.5, "129.5"),
            (75.0, "75"),
            (0.001, "0.001"),
            (-0.5, "-0.5"),
            (std::f64::consts::PI, "3.141592653589793"),
            (-0.0, "0"),
            (1e-6, "0.000001"),
            (1e-7, "1e-7"),
            (4e-7, "4e-7"),
            (1.5e-7, "1.5e-7"),
            (123456789.125, "123456789.125"),
            (9007199254740991.0, "9007199254740991"),
            (9007199254740992.0, "9.007199254740992e+15"),
            (1e20, "1e+20"),
            (1.25e21, "1.25e+21"),
            (9e18, "9e+18"),
            (-6.022e23, "-6.022e+23"),
            (1e300, "1e+300"),
            (5e-324, "5e-324"),
        ] {
            assert_eq!(number(v), text, "{v:e}");
            // The text reads back as the same double.
            assert_eq!(
                text.parse::<f64>().ok(),
                Some(if v == 0.0 { 0.0 } else { v })
            );
        }
    }

    #[test]
    fn integers_and_the_domain() {
        let mut out = String::new();
        write_number(&mut out, &Number::from(i64::MIN)).unwrap();
        assert_eq!(out, "-9223372036854775808");
        let e = write_number(&mut out, &Number::from(u64::MAX)).unwrap_err();
        assert_eq!(e.code(), "out_of_range");
    }
}
