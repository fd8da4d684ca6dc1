//! Float formatting exactly as the Go reference writes it.
//!
//! Row cells use Go's `strconv.FormatFloat(x, 'g', -1, bits)`: the shortest decimal that reads
//! back as the same float, laid out as `%e` when the decimal exponent is below -4 or at least 6
//! (Go fixes the `%g` precision at 6 for the shortest form) and as `%f` otherwise. Exponents
//! carry a sign and at least two digits: `1e+06`, `1e-05`, `1.234567e+06`, `0.0001`, `-0`.
//!
//! Numbers inside JSON (the generic fallback) use Go's `encoding/json` layout instead: `%f`
//! unless the magnitude is below 1e-6 or at least 1e21, and `e-07` shortened to `e-7`.
//!
//! The shortest digits come from `ryu`, which, like Go, picks the shortest digit string that
//! round-trips and, among those, the one closest to the exact value.

use crate::error::{ErrorKind, Result};

/// The shortest decimal digits of a finite float: the value is `0.d₁d₂…dₙ × 10^dp`.
struct Digits {
    negative: bool,
    digits: [u8; 32],
    len: usize,
    point: i32,
}

impl Digits {
    fn of_f64(value: f64) -> Digits {
        let mut buffer = ryu::Buffer::new();
        Digits::parse(value.is_sign_negative(), buffer.format_finite(value))
    }

    fn of_f32(value: f32) -> Digits {
        let mut buffer = ryu::Buffer::new();
        Digits::parse(value.is_sign_negative(), buffer.format_finite(value))
    }

    /// Reads ryu's output (`1.0`, `0.0001`, `1e16`, `-1.5e-7`, ...) into digits and a point.
    fn parse(negative: bool, text: &str) -> Digits {
        let text = text.strip_prefix('-').unwrap_or(text);
        let (mantissa, exponent) = match text.find(['e', 'E']) {
            Some(i) => (&text[..i], text[i + 1..].parse::<i32>().unwrap_or(0)),
            None => (text, 0),
        };
        let mut digits = [0u8; 32];
        let mut len = 0;
        let mut integer_digits = 0i32;
        let mut seen_point = false;
        for b in mantissa.bytes() {
            if b == b'.' {
                seen_point = true;
                continue;
            }
            if !seen_point {
                integer_digits += 1;
            }
            if len < digits.len() {
                digits[len] = b;
                len += 1;
            }
        }
        let mut point = integer_digits + exponent;
        let leading = digits[..len].iter().take_while(|&&d| d == b'0').count();
        if leading == len {
            return Digits {
                negative,
                digits,
                len: 0,
                point: 0,
            };
        }
        digits.copy_within(leading..len, 0);
        len -= leading;
        point -= leading as i32;
        while len > 0 && digits[len - 1] == b'0' {
            len -= 1;
        }
        Digits {
            negative,
            digits,
            len,
            point,
        }
    }

    /// Go's `%e` with `len - 1` fraction digits.
    fn write_exponent(&self, out: &mut Vec<u8>) {
        if self.negative {
            out.push(b'-');
        }
        out.push(if self.len == 0 { b'0' } else { self.digits[0] });
        if self.len > 1 {
            out.push(b'.');
            out.extend_from_slice(&self.digits[1..self.len]);
        }
        out.push(b'e');
        let exp = if self.len == 0 { 0 } else { self.point - 1 };
        out.push(if exp < 0 { b'-' } else { b'+' });
        let exp = exp.unsigned_abs();
        if exp < 10 {
            out.push(b'0');
        }
        let mut buffer = itoa::Buffer::new();
        out.extend_from_slice(buffer.format(exp).as_bytes());
    }

    /// Go's `%f` with as many fraction digits as the digits need.
    fn write_fixed(&self, out: &mut Vec<u8>) {
        if self.negative {
            out.push(b'-');
        }
        let len = self.len as i32;
        if self.point > 0 {
            let whole = self.point.min(len) as usize;
            out.extend_from_slice(&self.digits[..whole]);
            for _ in len..self.point {
                out.push(b'0');
            }
        } else {
            out.push(b'0');
        }
        let decimals = (len - self.point).max(0);
        if decimals > 0 {
            out.push(b'.');
            for i in 0..decimals {
                let j = self.point + i;
                out.push(if (0..len).contains(&j) {
                    self.digits[j as usize]
                } else {
                    b'0'
                });
            }
        }
    }

    /// `strconv.FormatFloat(x, 'g', -1, bits)`.
    fn write_go_g(&self, out: &mut Vec<u8>) {
        let exp = self.point - 1;
        if self.len > 0 && !(-4..6).contains(&exp) {
            self.write_exponent(out);
        } else {
            self.write_fixed(out);
        }
    }
}

/// Appends `value` as Go's `FormatFloat(value, 'g', -1, 64)` does. `value` must be finite.
pub(crate) fn write_go_g64(out: &mut Vec<u8>, value: f64) {
    Digits::of_f64(value).write_go_g(out);
}

/// Appends `value` as Go's `FormatFloat(float64(value), 'g', -1, 32)` does. `value` must be
/// finite.
pub(crate) fn write_go_g32(out: &mut Vec<u8>, value: f32) {
    Digits::of_f32(value).write_go_g(out);
}

/// Appends `value` as Go's `encoding/json` writes a float64, then `.0` if the text would
/// otherwise read back as an integer (so the number stays a float when decoded). `value`
/// must be finite.
pub(crate) fn write_go_json_f64(out: &mut Vec<u8>, value: f64) {
    if !write_hundredths(out, value) {
        write_go_json_shortest(out, value);
    }
}

/// [`write_go_json_f64`] through the shortest-digits search.
fn write_go_json_shortest(out: &mut Vec<u8>, value: f64) {
    let start = out.len();
    let digits = Digits::of_f64(value);
    let abs = value.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        digits.write_exponent(out);
        // Go cleans up `e-07` to `e-7`.
        let n = out.len();
        if n - start >= 4 && out[n - 4] == b'e' && out[n - 3] == b'-' && out[n - 2] == b'0' {
            out[n - 2] = out[n - 1];
            out.truncate(n - 1);
        }
    } else {
        digits.write_fixed(out);
    }
    if !out[start..].iter().any(|&b| b == b'.' || b == b'e') {
        out.extend_from_slice(b".0");
    }
}

/// Writes `value` in `encoding/json`'s layout if it is the double nearest a whole number of
/// hundredths between 0.01 and 1e9 in magnitude (prices, scores, percentages): `true` if
/// written. Integral values get `.0`, as every float of this codec does.
///
/// Such a value's shortest round-trip digits are those hundredths without trailing zeros:
/// the decimal `k/100` parses back to `value` (checked below: IEEE division rounds `k / 100`
/// exactly as parsing the decimal does), and below 1e9 a double's rounding interval (under
/// 2^-22 wide) holds no other number of hundredths, so no shorter decimal reads back as
/// `value` either. Integer arithmetic then writes them, where the shortest-digits search
/// costs a long chain of wide multiplications. (The technique of agentwire-gcf's number
/// writer; the tests compare the two paths on every value they try.)
#[inline]
fn write_hundredths(out: &mut Vec<u8>, value: f64) -> bool {
    let magnitude = value.abs();
    if !(0.01..1e9).contains(&magnitude) {
        return false;
    }
    // Truncating `x + 0.5` rounds to nearest (a wrong `k` fails the check, never passes it:
    // only one number of hundredths reads back as `value`).
    let hundredths = (magnitude * 100.0 + 0.5) as u64;
    if hundredths as f64 / 100.0 != magnitude {
        return false;
    }
    if value < 0.0 {
        out.push(b'-');
    }
    crate::escape::push_bytes(out, itoa::Buffer::new().format(hundredths / 100).as_bytes());
    let fraction = hundredths % 100;
    let (tenths, last) = ((fraction / 10) as u8, (fraction % 10) as u8);
    out.extend_from_slice(&[b'.', b'0' + tenths, b'0' + last]);
    if last == 0 {
        out.pop();
    }
    true
}

/// Reads a JSON number lexeme (already checked by the number syntax) exactly when it is
/// short: at most 15 significant digits and a decimal exponent within ±22. Then the digits
/// and the power of ten are both exact doubles, and one IEEE multiplication or division
/// rounds their product correctly, as a full decimal parse would (Clinger's fast path).
/// `None` for anything else, which the full parse reads.
#[inline]
pub(crate) fn parse_short_decimal(bytes: &[u8]) -> Option<f64> {
    const POW10: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ];
    let (negative, bytes) = match bytes {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, bytes),
    };
    let mut mantissa = 0u64;
    let mut digits = 0u32;
    let mut scale = 0i32;
    let mut point = false;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'0'..=b'9' => {
                mantissa = mantissa * 10 + u64::from(b - b'0');
                digits += 1;
                scale -= i32::from(point);
            }
            b'.' => point = true,
            _ => break,
        }
        i += 1;
        if digits > 15 {
            return None;
        }
    }
    if let Some(b'e' | b'E') = bytes.get(i) {
        i += 1;
        let sign = match bytes.get(i) {
            Some(b'-') => {
                i += 1;
                -1
            }
            Some(b'+') => {
                i += 1;
                1
            }
            _ => 1,
        };
        let exponent = &bytes[i..];
        if exponent.is_empty() || exponent.len() > 3 {
            return None;
        }
        let value = exponent
            .iter()
            .fold(0i32, |n, &d| n * 10 + i32::from(d - b'0'));
        scale += sign * value;
    }
    let power = *POW10.get(scale.unsigned_abs() as usize)?;
    let magnitude = if scale >= 0 {
        mantissa as f64 * power
    } else {
        mantissa as f64 / power
    };
    Some(if negative { -magnitude } else { magnitude })
}

/// Formats a float as a GCX1 cell, exactly as the Go reference writes it:
/// `strconv.FormatFloat(value, 'g', -1, 64)`, the shortest decimal that reads back as the
/// same float, with an exponent when the decimal exponent is below -4 or at least 6.
///
/// NaN and infinities have no GCX1 form and are a `non_finite_float` error.
///
/// ```
/// use agentwire_gcx1::format_f64;
///
/// assert_eq!(format_f64(1e6)?, "1e+06");
/// assert_eq!(format_f64(123456.0)?, "123456");
/// assert_eq!(format_f64(0.00001)?, "1e-05");
/// assert_eq!(format_f64(0.0001)?, "0.0001");
/// assert_eq!(format_f64(-0.0)?, "-0");
/// assert!(format_f64(f64::NAN).is_err());
/// # Ok::<(), agentwire_gcx1::Error>(())
/// ```
pub fn format_f64(value: f64) -> Result<String> {
    if !value.is_finite() {
        return Err(ErrorKind::NonFiniteFloat { value }.into());
    }
    Ok(go_g64(value))
}

/// [`format_f64`] for an `f32`: Go's `strconv.FormatFloat(float64(value), 'g', -1, 32)`,
/// the shortest decimal that reads back as the same `f32` (`0.1f32` is `0.1`).
pub fn format_f32(value: f32) -> Result<String> {
    if !value.is_finite() {
        return Err(ErrorKind::NonFiniteFloat {
            value: f64::from(value),
        }
        .into());
    }
    Ok(go_g32(value))
}

fn go_g64(value: f64) -> String {
    let mut out = Vec::with_capacity(24);
    write_go_g64(&mut out, value);
    String::from_utf8(out).unwrap_or_default()
}

fn go_g32(value: f32) -> String {
    let mut out = Vec::with_capacity(16);
    write_go_g32(&mut out, value);
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(v: f64) -> String {
        go_g64(v)
    }

    fn json(v: f64) -> String {
        let mut out = Vec::new();
        write_go_json_f64(&mut out, v);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn go_shortest_g_layout() {
        // Every case below is what Go's strconv.FormatFloat(x, 'g', -1, 64) returns.
        let cases: &[(f64, &str)] = &[
            (0.0, "0"),
            (-0.0, "-0"),
            (1.0, "1"),
            (-1.0, "-1"),
            (0.5, "0.5"),
            (0.3, "0.3"),
            (0.1 + 0.2, "0.30000000000000004"),
            (100000.0, "100000"),
            (123456.0, "123456"),
            (999999.0, "999999"),
            (1e6, "1e+06"),
            (1234567.0, "1.234567e+06"),
            (123456789.0, "1.23456789e+08"),
            (1e20, "1e+20"),
            (1e21, "1e+21"),
            (1.2345678901234567e20, "1.2345678901234567e+20"),
            (0.0001, "0.0001"),
            (0.00012345, "0.00012345"),
            (0.00001, "1e-05"),
            (1.5e-5, "1.5e-05"),
            (1e-7, "1e-07"),
            (1e100, "1e+100"),
            (1e-100, "1e-100"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (f64::MIN_POSITIVE, "2.2250738585072014e-308"),
            (-2.5e-10, "-2.5e-10"),
            (2.71, "2.71"),
            (12345.678, "12345.678"),
            (0.95, "0.95"),
            (9007199254740993.0, "9.007199254740992e+15"),
        ];
        for &(value, expected) in cases {
            assert_eq!(g(value), expected, "{value:e}");
        }
    }

    #[test]
    fn go_shortest_g_float32() {
        assert_eq!(go_g32(0.1), "0.1");
        assert_eq!(go_g32(1e6), "1e+06");
        assert_eq!(go_g32(16777216.0), "1.6777216e+07");
        assert_eq!(go_g32(3.4028235e38), "3.4028235e+38");
        assert_eq!(go_g32(-0.0), "-0");
        assert_eq!(go_g32(1.0e-45), "1e-45");
    }

    #[test]
    fn hundredths_are_written_as_the_shortest_digits_write_them() {
        let check = |v: f64| {
            let mut fast = Vec::new();
            let taken = write_hundredths(&mut fast, v);
            let mut slow = Vec::new();
            write_go_json_shortest(&mut slow, v);
            if taken {
                assert_eq!(fast, slow, "{v}");
            }
            taken
        };
        let mut taken = 0;
        for k in 1..=30_000u64 {
            let v = k as f64 / 100.0;
            taken += usize::from(check(v)) + usize::from(check(-v));
            check(f64::from_bits(v.to_bits() + 1));
            check(f64::from_bits(v.to_bits() - 1));
        }
        assert_eq!(taken, 60_000);
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..100_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            check((seed % 100_000_000_000) as f64 / 100.0);
            check(f64::from_bits(seed >> 2));
        }
    }

    #[test]
    fn short_decimals_read_as_the_full_parse_reads_them() {
        let check = |text: &str| {
            if let Some(fast) = parse_short_decimal(text.as_bytes()) {
                let full: f64 = text.parse().unwrap();
                assert_eq!(fast.to_bits(), full.to_bits(), "{text}");
                true
            } else {
                false
            }
        };
        for text in [
            "0.0",
            "-0.0",
            "1.5",
            "14.99",
            "1e22",
            "1.5e-21",
            "12345678901234.5",
        ] {
            assert!(check(text), "{text}");
        }
        for text in [
            "1e23",
            "1.5e-22",
            "1234567890123456.0",
            "0.1e1000",
            "2e0001",
        ] {
            assert!(!check(text), "{text}");
        }
        assert_eq!(
            parse_short_decimal(b"-0.0").map(f64::is_sign_negative),
            Some(true)
        );
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut taken = 0;
        for _ in 0..200_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let digits = seed % 10u64.pow(1 + (seed >> 60) as u32 % 15);
            let text = match (seed >> 40) % 4 {
                0 => format!("{}.{:02}", digits / 100, digits % 100),
                1 => format!("-{digits}e-{}", (seed >> 20) % 30),
                2 => format!("{digits}.5E+{}", (seed >> 20) % 25),
                _ => format!("0.{digits:015}"),
            };
            taken += usize::from(check(&text));
        }
        assert!(taken > 100_000, "{taken}");
    }

    #[test]
    fn go_json_layout_stays_a_float() {
        assert_eq!(json(0.5), "0.5");
        assert_eq!(json(1.0), "1.0");
        assert_eq!(json(-0.0), "-0.0");
        assert_eq!(json(0.0), "0.0");
        assert_eq!(json(1e6), "1000000.0");
        assert_eq!(json(1e20), "100000000000000000000.0");
        assert_eq!(json(1e21), "1e+21");
        assert_eq!(json(1.5e300), "1.5e+300");
        assert_eq!(json(1e-6), "0.000001");
        assert_eq!(json(1e-7), "1e-7");
        assert_eq!(json(1.25e-8), "1.25e-8");
        assert_eq!(json(1e-100), "1e-100");
        assert_eq!(json(123.456), "123.456");
    }

    #[test]
    fn round_trips_through_parse() {
        let mut x = 1.0e-310_f64;
        while x < 1e308 {
            for v in [x, -x, x * 1.2345678901, x / 3.0] {
                assert_eq!(g(v).parse::<f64>().unwrap(), v);
                assert_eq!(json(v).parse::<f64>().unwrap(), v);
            }
            x *= 7.3;
        }
    }
}
