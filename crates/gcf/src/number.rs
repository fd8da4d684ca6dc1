//! Numbers: the JSON number grammar (spec §2.3), canonical formatting (§2.3.1, with the v3.1
//! layout: plain decimals for `1e-6 <= |x| < 1e21`, normalized exponents otherwise, `-0` kept),
//! and exact parsing (§2.3.2: never silently approximate).

use crate::error::{Error, ErrorKind, Result};
use crate::lex::Sink;

/// Whether `s` matches the JSON number grammar exactly:
/// `-? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?`, ASCII digits only.
pub(crate) fn is_json_number(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if b.first() == Some(&b'-') {
        i = 1;
    }
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            i += 1;
            while matches!(b.get(i), Some(b'0'..=b'9')) {
                i += 1;
            }
        }
        _ => return false,
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if !matches!(b.get(i), Some(b'0'..=b'9')) {
            return false;
        }
        while matches!(b.get(i), Some(b'0'..=b'9')) {
            i += 1;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !matches!(b.get(i), Some(b'0'..=b'9')) {
            return false;
        }
        while matches!(b.get(i), Some(b'0'..=b'9')) {
            i += 1;
        }
    }
    i == b.len()
}

/// Whether a JSON number lexeme is an integer lexeme (no fraction, no exponent).
pub(crate) fn is_integer_lexeme(s: &str) -> bool {
    !s.bytes().any(|b| matches!(b, b'.' | b'e' | b'E'))
}

/// The exponents we handle: far beyond any float, small enough for `i64` arithmetic.
const MAX_EXPONENT: i64 = 1_000_000_000_000_000;

/// A decimal number taken apart: `value = (-1)^negative * 0.d1d2...dn * 10^(exponent + 1)`,
/// i.e. `d1.d2...dn * 10^exponent` with `d1 != 0` and `dn != 0`; zero has no digits.
struct Decimal<'a> {
    negative: bool,
    /// The significant digits as (up to) two slices of ASCII digits, concatenated.
    head: &'a [u8],
    tail: &'a [u8],
    /// The exponent of the first significant digit.
    exponent: i64,
}

impl Decimal<'_> {
    fn len(&self) -> usize {
        self.head.len() + self.tail.len()
    }

    fn is_zero(&self) -> bool {
        self.len() == 0
    }

    fn digit(&self, i: usize) -> u8 {
        if i < self.head.len() {
            self.head[i]
        } else {
            self.tail[i - self.head.len()]
        }
    }

    fn same_value(&self, other: &Decimal<'_>) -> bool {
        self.negative == other.negative
            && self.exponent == other.exponent
            && self.len() == other.len()
            && (0..self.len()).all(|i| self.digit(i) == other.digit(i))
    }
}

/// Takes apart a lexeme that matches the JSON number grammar (or the grammar with a `+` after
/// `e`, as float formatters write).
fn decimal(lexeme: &str) -> Result<Decimal<'_>> {
    let b = lexeme.as_bytes();
    let (negative, b) = match b.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, b),
    };
    let mantissa_end = b
        .iter()
        .position(|&c| c == b'e' || c == b'E')
        .unwrap_or(b.len());
    let (mantissa, exp) = b.split_at(mantissa_end);
    let (int, frac) = match mantissa.iter().position(|&c| c == b'.') {
        Some(dot) => (&mantissa[..dot], &mantissa[dot + 1..]),
        None => (mantissa, &mantissa[..0]),
    };
    let mut exponent: i64 = 0;
    if let Some((_, digits)) = exp.split_first() {
        let (sign, digits) = match digits.split_first() {
            Some((b'-', rest)) => (-1, rest),
            Some((b'+', rest)) => (1, rest),
            _ => (1, digits),
        };
        for &d in digits {
            exponent = exponent * 10 + i64::from(d - b'0');
            if exponent > MAX_EXPONENT {
                return Err(Error::new(
                    ErrorKind::OutOfRange,
                    format!("the exponent of {lexeme} is too large"),
                ));
            }
        }
        exponent *= sign;
    }
    // Significant digits: strip leading zeros (across int and frac) and trailing zeros.
    let int_start = int.iter().position(|&c| c != b'0');
    let (head, tail, first_exp) = match int_start {
        Some(start) => {
            let head = &int[start..];
            (head, frac, head.len() as i64 - 1)
        }
        None => match frac.iter().position(|&c| c != b'0') {
            Some(start) => (&frac[start..], &frac[..0], -(start as i64) - 1),
            None => {
                return Ok(Decimal {
                    negative,
                    head: &[],
                    tail: &[],
                    exponent: 0,
                })
            }
        },
    };
    // Trailing zeros: in tail first, then head.
    let (head, tail) = match tail.iter().rposition(|&c| c != b'0') {
        Some(last) => (head, &tail[..=last]),
        None => {
            let last = head.iter().rposition(|&c| c != b'0').unwrap_or(0);
            (&head[..=last], &tail[..0])
        }
    };
    Ok(Decimal {
        negative,
        head,
        tail,
        exponent: first_exp + exponent,
    })
}

/// Writes a decimal in canonical form (spec §2.3.1) with the v3.1 layout: plain for
/// `1e-6 <= |x| < 1e21`.
fn write_decimal(out: &mut impl Sink, d: &Decimal<'_>) {
    write_decimal_as(out, d, (-6..=20).contains(&d.exponent));
}

/// Writes a decimal in canonical form, plain or with a normalized exponent.
fn write_decimal_as<S: Sink>(out: &mut S, d: &Decimal<'_>, plain: bool) {
    if d.negative {
        out.push('-');
    }
    if d.is_zero() {
        out.push('0');
        return;
    }
    let n = d.len() as i64;
    let e = d.exponent;
    let digits = |out: &mut S, from: usize, to: usize| {
        for i in from..to {
            out.push(char::from(d.digit(i)));
        }
    };
    if plain {
        if e >= n - 1 {
            digits(out, 0, n as usize);
            for _ in 0..(e - (n - 1)) {
                out.push('0');
            }
        } else if e >= 0 {
            digits(out, 0, e as usize + 1);
            out.push('.');
            digits(out, e as usize + 1, n as usize);
        } else {
            out.push_str("0.");
            for _ in 0..(-e - 1) {
                out.push('0');
            }
            digits(out, 0, n as usize);
        }
    } else {
        digits(out, 0, 1);
        if n > 1 {
            out.push('.');
            digits(out, 1, n as usize);
        }
        out.push('e');
        out.push(if e < 0 { '-' } else { '+' });
        let mut buf = itoa::Buffer::new();
        out.push_str(buf.format(e.unsigned_abs()));
    }
}

/// Writes a JSON number lexeme (validated by the caller or here) in canonical form, keeping
/// every digit: the exact value of the lexeme.
pub(crate) fn write_lexeme(out: &mut impl Sink, lexeme: &str) -> Result<()> {
    if !is_json_number(lexeme) {
        return Err(Error::new(
            ErrorKind::InvalidNumber,
            format!("{lexeme:?} is not a JSON number"),
        ));
    }
    write_decimal(out, &decimal(lexeme)?);
    Ok(())
}

/// Writes an `f64` in canonical form: the shortest digits that round-trip, in the v3.1
/// layout; `-0.0` as `-0`. NaN and infinities are `invalid_number`.
#[inline(always)]
pub(crate) fn write_f64(out: &mut impl Sink, value: f64) -> Result<()> {
    // (Hundredths first: NaN and the infinities are outside their range.)
    if write_hundredths(out, value) {
        return Ok(());
    }
    write_f64_other(out, value)
}

/// [`write_f64`] for values that are not hundredths.
#[inline(never)]
fn write_f64_other(out: &mut impl Sink, value: f64) -> Result<()> {
    if !value.is_finite() {
        return Err(non_finite(value));
    }
    write_shortest(out, value);
    Ok(())
}

/// Writes a finite `f64` through the shortest-digits formatter, in the v3.1 layout.
fn write_shortest(out: &mut impl Sink, value: f64) {
    let mut buf = zmij::Buffer::new();
    let text = buf.format_finite(value);
    if (1e-4..1e15).contains(&value.abs()) {
        // The formatter writes these as plain digits (it does up to 1e16 and from 1e-5,
        // and the tests check this range), with at most a redundant `.0`: no need to look
        // for an exponent in the text, which waits for the formatter's last store.
        out.push_str(text.strip_suffix(".0").unwrap_or(text));
    } else {
        write_float_text(out, text);
    }
}

/// Writes `value` if it is the double nearest a whole number of hundredths between 0.01
/// and 1e9 in magnitude (prices, percentages, most measured data): `true` if written.
///
/// Such a value's shortest round-trip digits are those hundredths, without trailing zeros:
/// the decimal `k/100` parses back to `value` (the check below: IEEE division rounds
/// `k / 100` exactly as parsing the decimal does), and below 1e9 a double's rounding
/// interval (under 2^-22 wide) holds no other number of hundredths, so no shorter decimal,
/// which would be one, reads back as `value` either. Integer arithmetic then writes them,
/// where the shortest-digits search costs a long chain of wide multiplications; the tests
/// compare the two on every such value they try. (Inlined: out of line, its call and saved
/// registers were a fifth of its cost; the orders run 1.9 % fewer instructions inlined.)
#[inline(always)]
fn write_hundredths(out: &mut impl Sink, value: f64) -> bool {
    let magnitude = value.abs();
    if !(0.01..1e9).contains(&magnitude) {
        return false;
    }
    // Truncating `x + 0.5` rounds to nearest (a wrong `k` fails the check, never passes it:
    // only one number of hundredths reads back as `value`).
    // (Through `i64`: below 1e11, and the signed conversions are single instructions.)
    let hundredths = (magnitude * 100.0 + 0.5) as i64;
    if hundredths as f64 / 100.0 != magnitude {
        return false;
    }
    let hundredths = hundredths as u64;
    out.push_hundredths(value < 0.0, hundredths);
    true
}

/// Writes `hundredths / 100` with its fraction, without trailing zeros (`-12.5`, `3`), for
/// [`Sink::push_hundredths`].
#[inline]
pub(crate) fn write_hundredths_parts(out: &mut impl Sink, negative: bool, hundredths: u64) {
    if negative {
        out.push('-');
    }
    write_small_u64(out, hundredths / 100);
    let fraction = hundredths % 100;
    if fraction != 0 {
        let (tenths, last) = (fraction / 10, fraction % 10);
        out.push('.');
        out.push(digit(tenths));
        if last != 0 {
            out.push(digit(last));
        }
    }
}

/// The ASCII digit `d` (below 10). (Masked to seven bits, so that the compiler sees an ASCII
/// `char` and `String::push` stays a one-byte store, inlined.)
#[inline(always)]
fn digit(d: u64) -> char {
    char::from((b'0' + d as u8) & 0x7f)
}

/// Writes an `f32` in canonical form (its own shortest digits, not those of the `f64`).
pub(crate) fn write_f32(out: &mut impl Sink, value: f32) -> Result<()> {
    if !value.is_finite() {
        return Err(non_finite(f64::from(value)));
    }
    let mut buf = zmij::Buffer::new();
    write_float_text(out, buf.format_finite(value));
    Ok(())
}

#[cold]
fn non_finite(value: f64) -> Error {
    Error::new(
        ErrorKind::InvalidNumber,
        format!("{value} is not a JSON number (GCF has no NaN or infinities)"),
    )
}

/// Re-lays out the shortest-digits text of a float formatter (`1.0`, `0.25`, `1e-7`,
/// `1.5e+300`, `-0.0`).
fn write_float_text(out: &mut impl Sink, text: &str) {
    // An exponent (`e-7`, `e+300`) is within the last five bytes.
    let tail = &text.as_bytes()[text.len().saturating_sub(5)..];
    if !tail.contains(&b'e') {
        // The formatter writes plain digits only inside the plain range (checked by the
        // tests), with at most a redundant `.0`.
        out.push_str(text.strip_suffix(".0").unwrap_or(text));
        return;
    }
    match decimal(text) {
        Ok(d) => write_decimal(out, &d),
        // A float's exponent is always small; keep the text rather than panic.
        Err(_) => out.push_str(text),
    }
}

/// Below this magnitude (2^53) the current spec writes a double in plain digits; from it up,
/// with an exponent, so that a bare integer token is always an int64 (spec v3.5.3 §2.3.1).
const PLAIN_MAX: f64 = 9_007_199_254_740_992.0;

/// Writes an `f64` as the current spec has it: `0` for both zeros, plain digits for
/// `1e-6 <= |x| < 2^53`, a normalized exponent otherwise; the shortest digits that round-trip.
#[inline(always)]
pub(crate) fn write_f64_current(out: &mut impl Sink, value: f64) -> Result<()> {
    // (Hundredths first: zero, NaN and the infinities are outside their range.)
    if write_hundredths(out, value) {
        return Ok(());
    }
    write_f64_current_other(out, value)
}

/// [`write_f64_current`] for values that are not hundredths.
#[inline(never)]
fn write_f64_current_other(out: &mut impl Sink, value: f64) -> Result<()> {
    if !value.is_finite() {
        return Err(non_finite(value));
    }
    if value == 0.0 {
        out.push('0');
        return Ok(());
    }
    let magnitude = value.abs();
    let mut buf = zmij::Buffer::new();
    let text = buf.format_finite(value);
    if (1e-4..1e15).contains(&magnitude) {
        // Plain in both layouts (see `write_shortest`).
        out.push_str(text.strip_suffix(".0").unwrap_or(text));
    } else {
        write_float_text_as(out, text, (1e-6..PLAIN_MAX).contains(&magnitude));
    }
    Ok(())
}

/// Writes an `f32` as the current spec has it: its own shortest digits, in the layout of
/// [`write_f64_current`].
pub(crate) fn write_f32_current(out: &mut impl Sink, value: f32) -> Result<()> {
    if !value.is_finite() {
        return Err(non_finite(f64::from(value)));
    }
    if value == 0.0 {
        out.push('0');
        return Ok(());
    }
    let mut buf = zmij::Buffer::new();
    let magnitude = f64::from(value).abs();
    write_float_text_as(
        out,
        buf.format_finite(value),
        (1e-6..PLAIN_MAX).contains(&magnitude),
    );
    Ok(())
}

/// Re-lays out a float formatter's text, plain or with an exponent.
fn write_float_text_as(out: &mut impl Sink, text: &str, plain: bool) {
    match decimal(text) {
        Ok(d) => write_decimal_as(out, &d, plain),
        // A float's exponent is always small; keep the text rather than panic.
        Err(_) => out.push_str(text),
    }
}

/// The current spec's numeric domain error: the value, the range, the remedy.
#[cold]
pub(crate) fn out_of_range(value: &str) -> Error {
    Error::new(
        ErrorKind::OutOfRange,
        format!(
            "{value} is outside the numeric domain of the current GCF spec (integers from \
             -9223372036854775808 to 9223372036854775807, and doubles, §2.3.2); model it as a \
             string, or encode with Spec::V3_1, which writes integers of any size"
        ),
    )
}

/// Writes an unsigned integer under the current spec: within int64, or `out_of_range`.
#[inline(always)]
pub(crate) fn write_u64_current(out: &mut impl Sink, value: u64) -> Result<()> {
    if value > i64::MAX as u64 {
        return Err(out_of_range(itoa::Buffer::new().format(value)));
    }
    write_u64(out, value);
    Ok(())
}

/// Writes a JSON number lexeme under the current spec: an integer lexeme within int64 as its
/// digits, any other lexeme as the double it names exactly ([`write_f64_current`]); anything
/// else (an integer beyond int64, a decimal with more precision than a double, `1e400`) is
/// `out_of_range`.
pub(crate) fn write_lexeme_current(out: &mut impl Sink, lexeme: &str) -> Result<()> {
    if !is_json_number(lexeme) {
        return Err(Error::new(
            ErrorKind::InvalidNumber,
            format!("{lexeme:?} is not a JSON number"),
        ));
    }
    if is_integer_lexeme(lexeme) {
        return match lexeme.parse::<i64>() {
            Ok(v) => {
                write_i64(out, v);
                Ok(())
            }
            Err(_) => Err(out_of_range(lexeme)),
        };
    }
    // A double: a lexeme the double nearest to it spells, with no more significant digits than
    // a double needs (17) and no underflow to zero or overflow.
    let d = decimal(lexeme)?;
    let value = lexeme.parse::<f64>().unwrap_or(f64::NAN);
    let underflow = value == 0.0 && !d.is_zero();
    if value.is_finite() && !underflow && d.len() <= 17 {
        return write_f64_current(out, value);
    }
    match parse(lexeme) {
        Number::F64(v) => write_f64_current(out, v),
        _ => Err(out_of_range(lexeme)),
    }
}

/// Writes a 128-bit integer under the current spec: within int64, or `out_of_range`.
pub(crate) fn write_i128_current(out: &mut impl Sink, value: i128) -> Result<()> {
    match i64::try_from(value) {
        Ok(v) => {
            write_i64(out, v);
            Ok(())
        }
        Err(_) => Err(out_of_range(itoa::Buffer::new().format(value))),
    }
}

/// Writes an integer in canonical form (plain below 1e21, else a normalized exponent).
#[inline(always)]
pub(crate) fn write_u64(out: &mut impl Sink, value: u64) {
    out.push_u64(value);
}

/// [`write_u64`] for values that are mostly below 10 000 (the whole parts of prices and
/// amounts, row numbers).
#[inline(always)]
pub(crate) fn write_small_u64(out: &mut impl Sink, value: u64) {
    out.push_u64(value);
}

/// Writes an integer in canonical form.
#[inline]
pub(crate) fn write_i64(out: &mut impl Sink, value: i64) {
    if value < 0 {
        out.push('-');
    }
    out.push_u64(value.unsigned_abs());
}

/// Writes a 128-bit integer in canonical form (values of 1e21 and above take the exponent
/// form, with every digit).
pub(crate) fn write_i128(out: &mut impl Sink, value: i128) {
    let mut buf = itoa::Buffer::new();
    let text = buf.format(value);
    if text.len() <= 21 {
        out.push_str(text);
    } else {
        // Cannot fail: itoa writes a valid integer lexeme.
        let _ = write_lexeme(out, text);
    }
}

/// Writes a 128-bit unsigned integer in canonical form.
pub(crate) fn write_u128(out: &mut impl Sink, value: u128) {
    let mut buf = itoa::Buffer::new();
    let text = buf.format(value);
    if text.len() <= 21 {
        out.push_str(text);
    } else {
        let _ = write_lexeme(out, text);
    }
}

/// An integer value of a number lexeme, in the 128-bit type that holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Integer {
    /// A non-negative integer.
    U(u128),
    /// A negative integer.
    I(i128),
}

/// The exact integer value of a lexeme in any spelling (`1e+21`, `1.5e1`, `-0`), if it is
/// integral and fits 128 bits.
pub(crate) fn exact_integer(lexeme: &str) -> Option<Integer> {
    let d = decimal(lexeme).ok()?;
    if d.is_zero() {
        return Some(Integer::U(0));
    }
    let n = d.len() as i64;
    let e = d.exponent;
    if e < n - 1 || e > 39 {
        return None;
    }
    let mut text = String::with_capacity(e as usize + 2);
    if d.negative {
        text.push('-');
    }
    for i in 0..d.len() {
        text.push(char::from(d.digit(i)));
    }
    for _ in 0..(e - (n - 1)) {
        text.push('0');
    }
    if d.negative {
        text.parse().ok().map(Integer::I)
    } else {
        text.parse().ok().map(Integer::U)
    }
}

/// A parsed JSON number lexeme, in the richest type that holds it exactly.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Number {
    /// A non-negative integer that fits `u64`.
    U64(u64),
    /// A negative integer that fits `i64`.
    I64(i64),
    /// An integer beyond 64 bits that fits `u128`; with the `f64` of the same value when its
    /// shortest round-trip spelling is this integer (as for `100000000000000000000` = 1e20).
    U128(u128, Option<f64>),
    /// An integer beyond 64 bits that fits `i128`; with its `f64` as for [`Number::U128`].
    I128(i128, Option<f64>),
    /// A fraction or exponent lexeme (or `-0`, or an integer beyond 128 bits) whose shortest
    /// round-trip `f64` has exactly the lexeme's decimal value.
    F64(f64),
    /// A number no native type holds exactly: an integer beyond 128 bits, a decimal with more
    /// precision than `f64`, or outside its range. The nearest `f64` (possibly infinite or
    /// zero) comes with it.
    Inexact(f64),
}

/// Parses a lexeme that matches the JSON number grammar.
pub(crate) fn parse(lexeme: &str) -> Number {
    if let Some(v) = short_decimal(lexeme) {
        return Number::F64(v);
    }
    if is_integer_lexeme(lexeme) {
        if let Some(digits) = lexeme.strip_prefix('-') {
            if digits == "0" {
                return Number::F64(-0.0);
            }
            if let Ok(v) = lexeme.parse::<i64>() {
                return Number::I64(v);
            }
            if let Ok(v) = lexeme.parse::<i128>() {
                return Number::I128(v, exact_f64(lexeme));
            }
        } else {
            if let Ok(v) = lexeme.parse::<u64>() {
                return Number::U64(v);
            }
            if let Ok(v) = lexeme.parse::<u128>() {
                return Number::U128(v, exact_f64(lexeme));
            }
        }
    }
    let value = lexeme.parse::<f64>().unwrap_or(f64::NAN);
    if float_is_exact(lexeme, value) {
        Number::F64(value)
    } else {
        Number::Inexact(value)
    }
}

/// The value of a short decimal lexeme, `-?(0|[1-9][0-9]*)\.[0-9]+` with at most 15 digits,
/// which [`parse`] gives as `Number::F64` of the same value: its digits as an integer, exact
/// in a double, divided by an exact power of ten is the correctly rounded value (Clinger's
/// fast path), and at most 15 significant digits survive the round trip through `f64`.
/// `None` for any other lexeme.
#[inline]
pub(crate) fn short_decimal(lexeme: &str) -> Option<f64> {
    const POW10: [f64; 16] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
    ];
    let b = lexeme.as_bytes();
    let (negative, b) = match b.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, b),
    };
    if b.len() > 16 || b.len() < 3 {
        return None;
    }
    let mut mantissa: u64 = 0;
    let mut point = None;
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'0'..=b'9' => mantissa = mantissa * 10 + u64::from(c - b'0'),
            b'.' if point.is_none() => point = Some(i),
            _ => return None,
        }
    }
    // A point with digits on both sides, and no leading zero before it but a lone one.
    let point = point?;
    if point == 0 || point == b.len() - 1 || (b[0] == b'0' && point != 1) {
        return None;
    }
    let fraction_digits = b.len() - 1 - point;
    // At most 15 digits: the mantissa is below 2^53, exact, and so is the power of ten.
    #[allow(clippy::cast_precision_loss)]
    let value = mantissa as f64 / POW10[fraction_digits];
    Some(if negative { -value } else { value })
}

/// The double whose shortest spelling has exactly the value of `lexeme`, if there is one.
fn exact_f64(lexeme: &str) -> Option<f64> {
    let value = lexeme.parse::<f64>().ok()?;
    float_is_exact(lexeme, value).then_some(value)
}

/// Whether `value` (the nearest double to `lexeme`) has exactly the lexeme's decimal value,
/// i.e. whether the lexeme names a double in canonical shortest form (up to spelling).
fn float_is_exact(lexeme: &str, value: f64) -> bool {
    if !value.is_finite() {
        return false;
    }
    // Fast path: at most 15 significant digits always survive the round trip through f64,
    // unless the value is near the subnormal or overflow range.
    let mantissa_digits = lexeme
        .bytes()
        .take_while(|&b| b != b'e' && b != b'E')
        .filter(u8::is_ascii_digit)
        .count();
    let magnitude = value.abs();
    if mantissa_digits <= 15 && (value == 0.0 || (1e-300..1e300).contains(&magnitude)) {
        if value == 0.0 {
            // "0.0e5" is zero; "1e-400" underflows and is not.
            return decimal(lexeme).is_ok_and(|d| d.is_zero());
        }
        return true;
    }
    let Ok(wanted) = decimal(lexeme) else {
        return false;
    };
    let mut buf = zmij::Buffer::new();
    let text = buf.format_finite(value);
    match decimal(text) {
        Ok(got) => got.same_value(&wanted) || (got.is_zero() && wanted.is_zero()),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lexeme(s: &str) -> String {
        let mut out = String::new();
        write_lexeme(&mut out, s).unwrap();
        out
    }

    /// The next of a xorshift sequence: varied test values, the same on every run.
    fn xorshift(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    fn float(v: f64) -> String {
        let mut out = String::new();
        write_f64(&mut out, v).unwrap();
        out
    }

    #[test]
    fn short_decimals_parse_as_parse_does() {
        for lexeme in [
            "0.5",
            "-0.5",
            "0.0",
            "-0.0",
            "14.99",
            "249.0",
            "123456789012.345",
            "0.1",
            "0.3",
            "-1.25",
            "9.99999999999999",
            "100.10",
            "0.00000000000001",
        ] {
            let fast = short_decimal(lexeme).unwrap_or_else(|| panic!("{lexeme}"));
            let value = lexeme.parse::<f64>().unwrap();
            assert!(float_is_exact(lexeme, value), "{lexeme}");
            assert_eq!(fast.to_bits(), value.to_bits(), "{lexeme}");
            match parse(lexeme) {
                Number::F64(v) => assert_eq!(fast.to_bits(), v.to_bits(), "{lexeme}"),
                other => panic!("{lexeme}: {other:?}"),
            }
        }
        for other in [
            "1",
            "-1",
            ".5",
            "5.",
            "01.5",
            "-01.5",
            "1.2.3",
            "1e5",
            "1.5e3",
            "1234567890.1234567",
            "-",
            "",
            "0",
            "1.a",
            "--1.5",
            "+1.5",
            "1.000000000000001",
        ] {
            assert_eq!(short_decimal(other), None, "{other}");
        }
    }

    proptest::proptest! {
        /// Every short decimal reads as the general parse reads it: the same double, exact.
        #[test]
        fn short_decimals_agree_with_the_general_parse(
            negative: bool,
            int in 0u64..10_000_000,
            fraction in "[0-9]{1,12}",
        ) {
            let lexeme = format!("{}{int}.{fraction}", if negative { "-" } else { "" });
            match short_decimal(&lexeme) {
                Some(fast) => {
                    let value: f64 = lexeme.parse().unwrap();
                    proptest::prop_assert_eq!(fast.to_bits(), value.to_bits(), "{}", lexeme);
                    proptest::prop_assert!(float_is_exact(&lexeme, value), "{}", lexeme);
                }
                None => proptest::prop_assert!(lexeme.len() > 16 + usize::from(negative)),
            }
        }
    }

    #[test]
    fn grammar() {
        for ok in [
            "0",
            "-0",
            "12",
            "-12.5",
            "1e10",
            "6.022E+23",
            "1.0e-7",
            "0.5",
            "10",
            "1E5",
        ] {
            assert!(is_json_number(ok), "{ok}");
        }
        for bad in [
            "", "-", "01", "00.5", "1.", ".5", "+1", "NaN", "Infinity", "1e", "1e+", "0x1",
            "1.5e3.", " 1", "1 ", "١٢٣", "--1", "1..2", "-.5",
        ] {
            assert!(!is_json_number(bad), "{bad}");
        }
    }

    #[test]
    fn canonical_floats_follow_the_v31_layout() {
        // The numbers fixtures of the v3.1.0 suite, and the boundaries of the plain range.
        assert_eq!(float(42.0), "42");
        assert_eq!(float(2.75), "2.75");
        assert_eq!(float(6.022e23), "6.022e+23");
        assert_eq!(float(1e-7), "1e-7");
        assert_eq!(float(0.0), "0");
        assert_eq!(float(-0.0), "-0");
        assert_eq!(float(1e-6), "0.000001");
        assert_eq!(float(4e-7), "4e-7");
        assert_eq!(float(1e20), "100000000000000000000");
        assert_eq!(float(1e21), "1e+21");
        assert_eq!(float(1.23e21), "1.23e+21");
        assert_eq!(float(10000000000.0), "10000000000");
        assert_eq!(float(999999999999999.0), "999999999999999");
        assert_eq!(float(1e16), "10000000000000000");
        assert_eq!(float(123456.789), "123456.789");
        assert_eq!(float(0.000123), "0.000123");
        assert_eq!(float(-1.5e-9), "-1.5e-9");
        assert_eq!(float(5e-324), "5e-324");
        assert_eq!(float(f64::MAX), "1.7976931348623157e+308");
        assert_eq!(float(9007199254740993.0), "9007199254740992");
        assert_eq!(float(0.1 + 0.2), "0.30000000000000004");
        // The edges of the range `write_f64` writes without looking for an exponent.
        assert_eq!(float(1e-4), "0.0001");
        assert_eq!(float(9.999999999999999e-5), "0.00009999999999999999");
        assert_eq!(float(1e15), "1000000000000000");
        assert_eq!(float(999999999999999.9), "999999999999999.9");
        let mut out = String::new();
        write_f32(&mut out, 0.1).unwrap();
        assert_eq!(out, "0.1");
    }

    #[test]
    fn the_fast_path_agrees_with_the_general_layout() {
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        for i in 0..200_000 {
            let bits = xorshift(&mut state);
            let v = if i % 2 == 0 {
                f64::from_bits(bits)
            } else {
                // Values near the plain-range boundaries.
                let mantissa = (bits % 1_000_000) as f64 / 1000.0;
                mantissa * 10f64.powi((bits >> 40) as i32 % 50 - 25)
            };
            if !v.is_finite() {
                continue;
            }
            let expected = {
                // The same digits through the general layout (zmij, like Ryu and Go, breaks
                // ties between equally short candidates to even, so std's `{:e}` may differ).
                let mut buf = zmij::Buffer::new();
                let text = buf.format_finite(v);
                let mut out = String::new();
                write_decimal(&mut out, &decimal(text).unwrap());
                out
            };
            assert_eq!(float(v), expected, "{v:e}");
            assert_eq!(v, float(v).parse::<f64>().unwrap());
        }
    }

    #[test]
    fn integers_are_written_as_itoa_writes_them() {
        let big = [
            999_999,
            1_000_000,
            u64::from(u32::MAX),
            i64::MAX as u64,
            u64::MAX,
        ];
        for v in (0..=12_000u64).chain(big) {
            let mut out = String::from("x");
            write_u64(&mut out, v);
            write_small_u64(&mut out, v);
            assert_eq!(out, format!("x{v}{v}"));
        }
    }

    #[test]
    fn hundredths_are_written_as_the_formatter_writes_them() {
        let check = |v: f64| {
            let mut fast = String::new();
            let taken = write_hundredths(&mut fast, v);
            let mut general = String::new();
            write_shortest(&mut general, v);
            if taken {
                assert_eq!(fast, general, "{v:e}");
            }
            taken
        };
        // Every number of hundredths up to 3000, and their neighbours (which it leaves).
        for k in 0..=300_000u64 {
            let v = k as f64 / 100.0;
            assert_eq!(check(v), k > 0, "{k}");
            assert!(!check(-v) || k > 0);
            if k > 0 {
                assert!(!check(v.next_up()) && !check(v.next_down()), "{k}");
            }
        }
        // Spread over the range, up to the bound.
        let mut state = 0x2545_F491_4F6C_DD1D_u64;
        let mut taken = 0;
        for _ in 0..300_000 {
            let bits = xorshift(&mut state);
            let k = bits % 100_000_000_000;
            let v = k as f64 / 100.0;
            taken += usize::from(check(v) || check(-v));
            // Nearby values with more digits, and ones of other scales.
            check(v + 0.001);
            check(v * 0.37);
            check(f64::from_bits(bits >> 2));
        }
        assert!(taken > 290_000, "{taken}");
        for v in [
            0.01,
            0.1,
            0.3,
            0.5,
            0.07,
            1e9 - 0.01,
            999_999_999.99,
            123_456.78,
            0.3 + 0.2,
        ] {
            assert!(check(v), "{v}");
        }
        for v in [
            0.0,
            -0.0,
            0.005,
            1e9,
            1e9 + 0.5,
            0.1 + 0.2,
            1.0 / 3.0,
            5e-324,
        ] {
            assert!(!check(v), "{v}");
        }
    }

    #[test]
    fn non_finite_floats_are_rejected() {
        for v in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let err = write_f64(&mut String::new(), v).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidNumber);
        }
        assert!(write_f32(&mut String::new(), f32::NAN).is_err());
    }

    #[test]
    fn lexemes_keep_every_digit() {
        assert_eq!(lexeme("-0"), "-0");
        assert_eq!(lexeme("-0.0"), "-0");
        assert_eq!(lexeme("0e5"), "0");
        assert_eq!(lexeme("100000000000000000000"), "100000000000000000000");
        assert_eq!(lexeme("1000000000000000000000"), "1e+21");
        assert_eq!(
            lexeme("123456789012345678901234567890"),
            "1.2345678901234567890123456789e+29"
        );
        assert_eq!(
            lexeme("18446744073709551616"),
            "18446744073709551616" // 2^64, still plain
        );
        assert_eq!(lexeme("10000000000.0"), "10000000000");
        assert_eq!(lexeme("1e-06"), "0.000001");
        assert_eq!(lexeme("1e-07"), "1e-7");
        assert_eq!(lexeme("6.022E+23"), "6.022e+23");
        assert_eq!(lexeme("0.00100"), "0.001");
        assert_eq!(lexeme("1.50e1"), "15");
        assert_eq!(lexeme("12.5e-1"), "1.25");
        assert_eq!(lexeme("1e400"), "1e+400");
        assert_eq!(
            lexeme("0.1000000000000000055511151231257827"),
            "0.1000000000000000055511151231257827"
        );
    }

    #[test]
    fn invalid_lexemes_are_rejected() {
        assert_eq!(
            write_lexeme(&mut String::new(), "1.").unwrap_err().kind(),
            ErrorKind::InvalidNumber
        );
        assert_eq!(
            write_lexeme(&mut String::new(), "1e99999999999999999999")
                .unwrap_err()
                .kind(),
            ErrorKind::OutOfRange
        );
    }

    #[test]
    fn big_integers() {
        let mut out = String::new();
        write_u128(&mut out, u128::MAX);
        assert_eq!(out, "3.40282366920938463463374607431768211455e+38");
        out.clear();
        write_i128(&mut out, -(10i128.pow(21)));
        assert_eq!(out, "-1e+21");
        out.clear();
        write_i128(&mut out, 10i128.pow(20) + 7);
        assert_eq!(out, "100000000000000000007");
        out.clear();
        write_u64(&mut out, u64::MAX);
        assert_eq!(out, "18446744073709551615");
        out.clear();
        write_i64(&mut out, i64::MIN);
        assert_eq!(out, "-9223372036854775808");
    }

    #[test]
    fn integers_in_any_spelling() {
        assert_eq!(exact_integer("-1e+21"), Some(Integer::I(-(10i128.pow(21)))));
        assert_eq!(exact_integer("1.5e1"), Some(Integer::U(15)));
        assert_eq!(exact_integer("-0"), Some(Integer::U(0)));
        assert_eq!(exact_integer("0.0"), Some(Integer::U(0)));
        assert_eq!(exact_integer("1.5"), None);
        assert_eq!(exact_integer("1e40"), None);
        assert_eq!(
            exact_integer("1.2345678901234567890123456789e+29"),
            Some(Integer::U(123456789012345678901234567890))
        );
        assert_eq!(exact_integer("3.5e+38"), None);
    }

    #[test]
    fn parsing_is_exact_or_says_so() {
        assert_eq!(parse("0"), Number::U64(0));
        assert_eq!(parse("-0"), Number::F64(-0.0));
        assert!(matches!(parse("-0"), Number::F64(z) if z.is_sign_negative()));
        assert_eq!(parse("-17"), Number::I64(-17));
        assert_eq!(parse("18446744073709551615"), Number::U64(u64::MAX));
        assert_eq!(parse("18446744073709551616"), Number::U128(1 << 64, None));
        assert_eq!(
            parse("100000000000000000000"),
            Number::U128(10u128.pow(20), Some(1e20))
        );
        assert_eq!(
            parse("-9223372036854775809"),
            Number::I128(-9223372036854775809, None)
        );
        assert!(matches!(
            parse("1234567890123456789012345678901234567890"),
            Number::Inexact(_)
        ));
        assert_eq!(
            parse("10000000000000000000000000000000000000000"),
            Number::F64(1e40)
        );
        assert_eq!(parse("2.5"), Number::F64(2.5));
        assert_eq!(parse("6.022E+23"), Number::F64(6.022e23));
        assert_eq!(parse("1.0"), Number::F64(1.0));
        assert_eq!(parse("0.0e7"), Number::F64(0.0));
        assert_eq!(parse("0.30000000000000004"), Number::F64(0.1 + 0.2));
        assert!(matches!(parse("1e400"), Number::Inexact(v) if v.is_infinite()));
        assert!(matches!(parse("1e-400"), Number::Inexact(v) if v == 0.0));
        assert!(matches!(
            parse("0.1000000000000000055511151231257827"),
            Number::Inexact(_)
        ));
        assert!(matches!(parse("3.141592653589793238"), Number::Inexact(_)));
        assert_eq!(
            parse("3.141592653589793"),
            Number::F64(std::f64::consts::PI)
        );
    }
}
