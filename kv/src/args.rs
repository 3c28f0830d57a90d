//! Argument access and parsing with Redis's exact rules and error texts. Arity is checked by the
//! dispatcher, but handlers still go through [`arg`] so a table mistake is an error, not a panic.

use crate::error::{KvError, KvResult, NOT_FLOAT};
use bytes::Bytes;

/// The argument at `i`, or `ERR syntax error` if absent.
pub fn arg(args: &[Bytes], i: usize) -> KvResult<&Bytes> {
    args.get(i).ok_or_else(KvError::syntax)
}

/// Parses a Redis integer: optional `-`, digits, no `+`, no spaces, no leading zeros.
#[must_use]
pub fn parse_i64_opt(raw: &[u8]) -> Option<i64> {
    let digits = raw.strip_prefix(b"-").unwrap_or(raw);
    let canonical = !digits.is_empty()
        && raw.len() <= 20
        && digits.iter().all(u8::is_ascii_digit)
        && (digits == b"0" || !digits.starts_with(b"0"))
        && raw != b"-0";
    if !canonical {
        return None;
    }
    std::str::from_utf8(raw).ok()?.parse().ok()
}

/// Like [`parse_i64_opt`], failing with `ERR value is not an integer or out of range`.
pub fn parse_i64(raw: &[u8]) -> KvResult<i64> {
    parse_i64_opt(raw).ok_or_else(KvError::not_integer)
}

/// Parses a float as Redis does for INCRBYFLOAT / HINCRBYFLOAT (no spaces, no NaN).
pub fn parse_f64(raw: &[u8]) -> KvResult<f64> {
    let text = std::str::from_utf8(raw).map_err(|_| KvError::command(NOT_FLOAT))?;
    let valid_chars = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'+'));
    let parsed = valid_chars
        .then(|| crate::score::parse_hex_float(text).or_else(|| text.parse::<f64>().ok()))
        .flatten();
    let value: f64 = match parsed {
        Some(v) if !v.is_nan() => v,
        _ => return Err(KvError::command(NOT_FLOAT)),
    };
    Ok(value)
}

/// Formats a float the way Redis prints INCRBYFLOAT results (`%.17Lf`, then trailing zeros
/// and point removed): fixed notation, at most 17 decimals. Redis computes in `long double`;
/// we round to 15 significant digits first so that sums such as 0.1 + 0.2 print as `0.3` as
/// they do there (a value that rounding would overflow is kept as it is).
#[must_use]
pub fn format_float(value: f64) -> String {
    if value.is_infinite() {
        return if value > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    let rounded = format!("{value:.14e}")
        .parse::<f64>()
        .ok()
        .filter(|r| r.is_finite())
        .unwrap_or(value);
    let text = round_decimals(&format!("{rounded}"), 17);
    let text = match text.split_once('.') {
        Some(_) => text.trim_end_matches('0').trim_end_matches('.'),
        None => text.as_str(),
    };
    if text == "-0" {
        "0".into()
    } else {
        text.into()
    }
}

/// Rounds a plain decimal text (`-123.456…`, no exponent) to at most `places` decimals, half
/// up.
fn round_decimals(text: &str, places: usize) -> String {
    let (sign, body) = match text.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", text),
    };
    let Some((int, frac)) = body.split_once('.') else {
        return text.to_string();
    };
    let Some(next) = frac.as_bytes().get(places) else {
        return text.to_string();
    };
    let mut digits: Vec<u8> = int.bytes().chain(frac.bytes().take(places)).collect();
    if *next >= b'5' {
        let mut carry = true;
        for d in digits.iter_mut().rev() {
            if *d == b'9' {
                *d = b'0';
            } else {
                *d += 1;
                carry = false;
                break;
            }
        }
        if carry {
            digits.insert(0, b'1');
        }
    }
    let (int, frac) = digits.split_at(digits.len().saturating_sub(places));
    format!(
        "{sign}{}.{}",
        String::from_utf8_lossy(int),
        String::from_utf8_lossy(frac)
    )
}

/// Case-insensitive ASCII equality of an argument with an option name.
#[must_use]
pub fn is(raw: &[u8], name: &str) -> bool {
    raw.eq_ignore_ascii_case(name.as_bytes())
}

/// An argument as (lossy) text, for error messages.
#[must_use]
pub fn lossy(raw: &[u8]) -> String {
    String::from_utf8_lossy(raw).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_follow_redis_rules() {
        assert_eq!(parse_i64_opt(b"0"), Some(0));
        assert_eq!(parse_i64_opt(b"-12"), Some(-12));
        assert_eq!(parse_i64_opt(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64_opt(b"-9223372036854775808"), Some(i64::MIN));
        for bad in [
            &b""[..],
            b"+1",
            b" 1",
            b"1 ",
            b"01",
            b"-0",
            b"1.0",
            b"9223372036854775808",
            b"abc",
            b"-",
        ] {
            assert_eq!(parse_i64_opt(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn floats_parse_and_format() {
        assert_eq!(parse_f64(b"10.5").unwrap(), 10.5);
        assert_eq!(parse_f64(b"5.0e3").unwrap(), 5000.0);
        assert!(parse_f64(b"nan").is_err());
        assert!(parse_f64(b" 1").is_err());
        assert!(parse_f64(b"").is_err());
        assert_eq!(format_float(10.6), "10.6");
        assert_eq!(format_float(0.1 + 0.2), "0.3");
        assert_eq!(format_float(5000.0), "5000");
        assert_eq!(format_float(-0.0), "0");
        assert_eq!(format_float(1.0e20), "100000000000000000000");
        // %.17Lf: at most 17 decimals.
        assert_eq!(format_float(1.5e-20), "0");
        assert_eq!(format_float(-1.5e-20), "0");
        assert_eq!(format_float(1.5e-17), "0.00000000000000002");
        assert_eq!(format_float(0.999_999_999_999_999_999), "1");
        assert_eq!(format_float(1e-5), "0.00001");
        // Rounding to 15 digits would overflow; the value itself is printed.
        assert!(format_float(f64::MAX).starts_with("17976931348623157"));
    }
}
