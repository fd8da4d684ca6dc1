//! What the graph profile's and the generic profile's deltas share: the pack root of
//! canonical bytes (`sha256:` and 64 hex digits, spec §10.2 and §10a.3) and the `savings=`
//! figure of a delta header. Built with the `graph` or the `generic-delta` feature (the only
//! users of `sha2`).

use sha2::{Digest, Sha256};

/// The root of validated canonical bytes.
pub(crate) fn root_of(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha256::digest(bytes);
    let mut root = String::with_capacity(7 + 64);
    root.push_str("sha256:");
    for b in digest.iter() {
        root.push(char::from(HEX[usize::from(b >> 4)]));
        root.push(char::from(HEX[usize::from(b & 0xf)]));
    }
    root
}

/// The saving of a delta over a full payload in percent: `100 × (1 − delta/full)` rounded
/// half-to-even, as the references print it (0 when `full_tokens` is 0).
pub(crate) fn savings(delta_tokens: u64, full_tokens: u64) -> i64 {
    if full_tokens == 0 {
        return 0;
    }
    let p = 100.0 * (1.0 - delta_tokens as f64 / full_tokens as f64);
    format!("{p:.0}").parse::<i64>().unwrap_or(0)
}

/// `N%` or `-N%`, `N` a count (`0` or a decimal without leading zeros).
pub(crate) fn parse_savings(value: &str) -> Option<i64> {
    let digits = value.strip_suffix('%')?;
    let (negative, digits) = match digits.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, digits),
    };
    let b = digits.as_bytes();
    let valid = match b.first() {
        Some(b'0') => b.len() == 1,
        Some(b'1'..=b'9') => b.iter().all(u8::is_ascii_digit),
        _ => false,
    };
    let n: i64 = if valid {
        digits.parse().ok()?
    } else {
        return None;
    };
    Some(if negative { -n } else { n })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn savings_round_half_to_even_and_parse_back() {
        assert_eq!(savings(1, 8), 88); // 87.5
        assert_eq!(savings(3, 8), 62); // 62.5
        assert_eq!(savings(5, 4), -25);
        assert_eq!(savings(1, 0), 0);
        assert_eq!(parse_savings("62%"), Some(62));
        assert_eq!(parse_savings("-25%"), Some(-25));
        assert_eq!(parse_savings("0%"), Some(0));
        for bad in [
            "62",
            "062%",
            "%",
            "-%",
            "+1%",
            "1.5%",
            "99999999999999999999%",
        ] {
            assert_eq!(parse_savings(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_root_of_nothing_is_sha256_of_nothing() {
        assert_eq!(
            root_of(b""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
