//! Sorted-set scores: the byte layouts that carry them (FORMAT.md, `kv_score` and zset member
//! values), Redis's parsing rules for scores and score ranges, and Redis's reply formatting.
//!
//! Invariants: a stored score is never NaN; `-0.0` is stored as `0.0`, so the order-preserving
//! 8-byte encoding sorts exactly like `f64::total_cmp` over the scores that can be stored and
//! equal scores have equal bytes; a score index entry is
//! `data_prefix(db, key, incarnation) | encode_score(score) | member`.

use crate::error::{KvError, KvResult, NOT_FLOAT};
use crate::format::data_prefix;

/// Version byte of a zset member value in `kv_data` (`1 | score as f64 bits, BE`).
pub const ZSET_MEMBER_V1: u8 = 1;

/// Normalises a score before storing it (`-0.0` → `0.0`).
#[must_use]
pub fn normalize(score: f64) -> f64 {
    if score == 0.0 { 0.0 } else { score }
}

/// Order-preserving 8-byte encoding: byte order equals numeric order.
#[must_use]
pub fn encode_score(score: f64) -> [u8; 8] {
    let bits = normalize(score).to_bits();
    let ordered = if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    };
    ordered.to_be_bytes()
}

/// Inverse of [`encode_score`].
#[must_use]
pub fn decode_score(raw: [u8; 8]) -> f64 {
    let ordered = u64::from_be_bytes(raw);
    let bits = if ordered >> 63 == 1 {
        ordered & !(1 << 63)
    } else {
        !ordered
    };
    f64::from_bits(bits)
}

/// `kv_score` prefix of one score of one incarnation (every member with that score).
#[must_use]
pub fn score_prefix(db: u8, key: &[u8], incarnation: u64, score: f64) -> Vec<u8> {
    let mut out = data_prefix(db, key, incarnation);
    out.extend_from_slice(&encode_score(score));
    out
}

/// `kv_score` key of one member.
#[must_use]
pub fn score_key(db: u8, key: &[u8], incarnation: u64, score: f64, member: &[u8]) -> Vec<u8> {
    let mut out = score_prefix(db, key, incarnation, score);
    out.extend_from_slice(member);
    out
}

/// The part of a `kv_score` key after the incarnation prefix: `encode_score(score) | member`.
#[must_use]
pub fn score_suffix(score: f64, member: &[u8]) -> Vec<u8> {
    let mut out = encode_score(score).to_vec();
    out.extend_from_slice(member);
    out
}

/// Pop hints of a sorted set, kept in its meta record's trailing bytes (FORMAT.md): `floor` ≤
/// every live index suffix, `ceiling` ≥ every live index suffix. ZPOPMIN / ZPOPMAX move them
/// past what they delete, so later pops and index walks seek over the deleted entries'
/// tombstones instead of stepping through them; every index insertion widens them again.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PopHints {
    /// Lower bound of the live index suffixes.
    pub floor: Option<Vec<u8>>,
    /// Upper bound of the live index suffixes.
    pub ceiling: Option<Vec<u8>>,
}

const HINT_FLOOR: u8 = 1;
const HINT_CEILING: u8 = 2;

impl PopHints {
    /// Decodes a zset meta's trailing bytes (empty = no hints).
    pub fn decode(raw: &[u8]) -> KvResult<Self> {
        let corrupt = || KvError::Corrupt("zset pop hints".into());
        let Some((&flags, mut rest)) = raw.split_first() else {
            return Ok(Self::default());
        };
        if flags & !(HINT_FLOOR | HINT_CEILING) != 0 {
            return Err(corrupt());
        }
        let mut take = |present: bool| -> KvResult<Option<Vec<u8>>> {
            if !present {
                return Ok(None);
            }
            let (len, tail) = rest.split_first_chunk::<4>().ok_or_else(corrupt)?;
            let len = usize::try_from(u32::from_be_bytes(*len)).map_err(|_| corrupt())?;
            let (value, tail) = tail.split_at_checked(len).ok_or_else(corrupt)?;
            rest = tail;
            Ok(Some(value.to_vec()))
        };
        let floor = take(flags & HINT_FLOOR != 0)?;
        let ceiling = take(flags & HINT_CEILING != 0)?;
        if !rest.is_empty() {
            return Err(corrupt());
        }
        Ok(Self { floor, ceiling })
    }

    /// Encodes (empty when there is no hint).
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        if self.floor.is_none() && self.ceiling.is_none() {
            return Vec::new();
        }
        let mut out = vec![
            (u8::from(self.floor.is_some()) * HINT_FLOOR)
                | (u8::from(self.ceiling.is_some()) * HINT_CEILING),
        ];
        for hint in [&self.floor, &self.ceiling].into_iter().flatten() {
            let len = u32::try_from(hint.len()).unwrap_or(u32::MAX);
            out.extend_from_slice(&len.to_be_bytes());
            out.extend_from_slice(hint);
        }
        out
    }

    /// Widens the hints to cover a newly inserted index suffix; true if they changed.
    pub fn note_insert(&mut self, suffix: &[u8]) -> bool {
        let mut changed = false;
        if self.floor.as_deref().is_some_and(|f| suffix < f) {
            self.floor = Some(suffix.to_vec());
            changed = true;
        }
        if self.ceiling.as_deref().is_some_and(|c| suffix > c) {
            self.ceiling = Some(suffix.to_vec());
            changed = true;
        }
        changed
    }
}

/// Splits the part of a `kv_score` key after the incarnation prefix into (score, member).
pub fn split_score_entry(suffix: &[u8]) -> KvResult<(f64, &[u8])> {
    let (score, member) = suffix
        .split_first_chunk::<8>()
        .ok_or_else(|| KvError::Corrupt("short score index key".into()))?;
    Ok((decode_score(*score), member))
}

/// A zset member's value in `kv_data`.
#[must_use]
pub fn encode_member_value(score: f64) -> [u8; 9] {
    let mut out = [0u8; 9];
    out[0] = ZSET_MEMBER_V1;
    out[1..].copy_from_slice(&normalize(score).to_bits().to_be_bytes());
    out
}

/// Decodes a zset member's value.
pub fn decode_member_value(raw: &[u8]) -> KvResult<f64> {
    match raw.split_first() {
        Some((&ZSET_MEMBER_V1, bits)) => <[u8; 8]>::try_from(bits)
            .map(|b| f64::from_bits(u64::from_be_bytes(b)))
            .map_err(|_| KvError::Corrupt("zset member value length".into())),
        _ => Err(KvError::Corrupt("zset member value version".into())),
    }
}

/// `[+-]digits`.
fn is_exponent(text: &str) -> bool {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Parses C's hexadecimal float text (`0x10`, `-0x1.8p3`), which `strtod` accepts and Rust's
/// `f64::from_str` does not: optional sign, `0x`, hex digits with an optional point (at least
/// one digit), an optional binary exponent `p[+-]digits`. `None` if `text` is not that form.
#[must_use]
pub fn parse_hex_float(text: &str) -> Option<f64> {
    let (negative, rest) = match text.as_bytes().first() {
        Some(b'-') => (true, text.get(1..)?),
        Some(b'+') => (false, text.get(1..)?),
        _ => (false, text),
    };
    let rest = rest
        .strip_prefix("0x")
        .or_else(|| rest.strip_prefix("0X"))?;
    let (digits, exponent) = match rest.find(['p', 'P']) {
        Some(at) => (rest.get(..at)?, Some(rest.get(at + 1..)?)),
        None => (rest, None),
    };
    let (int_part, frac_part) = digits.split_once('.').unwrap_or((digits, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    // The first 15 significant hex digits (60 bits) are kept exactly; later ones only scale.
    let mut mantissa: u64 = 0;
    let mut scale: i64 = 0;
    let mut kept = 0;
    for (i, c) in int_part.chars().chain(frac_part.chars()).enumerate() {
        let d = u64::from(c.to_digit(16)?);
        let fractional = i >= int_part.len();
        if kept < 15 {
            if mantissa != 0 || d != 0 {
                kept += 1;
            }
            mantissa = mantissa * 16 + d;
            if fractional {
                scale -= 4;
            }
        } else if !fractional {
            scale += 4;
        }
    }
    let exponent: i64 = match exponent {
        Some(e) if is_exponent(e) => e.parse().unwrap_or(if e.starts_with('-') {
            -100_000
        } else {
            100_000
        }),
        Some(_) => return None,
        None => 0,
    };
    let power = i32::try_from((scale + exponent).clamp(-100_000, 100_000)).ok()?;
    // Two steps so that 2^power itself never overflows or underflows needlessly.
    let half = power / 2;
    let value = (mantissa as f64) * 2f64.powi(half) * 2f64.powi(power - half);
    Some(if negative { -value } else { value })
}

/// Parses a float as C `strtod` does for Redis (`inf`, `-inf`, `+inf`, exponents, hex
/// floats), rejecting empty input, spaces, trailing garbage, NaN, and overflow / underflow of
/// finite text.
#[must_use]
pub fn parse_float_opt(raw: &[u8]) -> Option<f64> {
    let text = std::str::from_utf8(raw).ok()?;
    if text.is_empty() || text.starts_with(|c: char| c.is_ascii_whitespace()) {
        return None;
    }
    if let Some(value) = parse_hex_float(text) {
        return value.is_finite().then_some(value); // infinite: ERANGE overflow
    }
    let value: f64 = text.parse().ok()?;
    if value.is_nan() {
        return None;
    }
    let lower = text.to_ascii_lowercase();
    if value.is_infinite() && !lower.contains("inf") {
        return None; // ERANGE overflow
    }
    let mantissa = lower.split('e').next().unwrap_or_default();
    if value == 0.0 && mantissa.bytes().any(|b| (b'1'..=b'9').contains(&b)) {
        return None; // ERANGE underflow
    }
    Some(value)
}

/// Parses a score-range end's number as Redis's `zslParseRange` does, with bare `strtod`:
/// leading white space is skipped, the empty string is 0, overflow is ±inf and underflow 0;
/// trailing text and NaN are rejected.
#[must_use]
pub fn parse_range_float(raw: &[u8]) -> Option<f64> {
    if raw.is_empty() {
        return Some(0.0); // strtod converts nothing and stops at the terminator
    }
    let text = std::str::from_utf8(raw).ok()?;
    let text = text.trim_start_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r']);
    let value = match parse_hex_float(text) {
        Some(value) => value,
        None => text.parse::<f64>().ok()?,
    };
    (!value.is_nan()).then_some(value)
}

/// Parses a score argument (ZADD, ZINCRBY): `ERR value is not a valid float`.
pub fn parse_score(raw: &[u8]) -> KvResult<f64> {
    parse_float_opt(raw).ok_or_else(|| KvError::command(NOT_FLOAT))
}

/// One end of a score range (`1.5`, `(1.5`, `-inf`, `+inf`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoreBound {
    /// The score.
    pub value: f64,
    /// True for a `(` bound.
    pub exclusive: bool,
}

/// Parses a score-range end; `None` is Redis's "min or max is not a float".
#[must_use]
pub fn parse_score_bound(raw: &[u8]) -> Option<ScoreBound> {
    let (exclusive, text) = match raw.strip_prefix(b"(") {
        Some(rest) => (true, rest),
        None => (false, raw),
    };
    let value = parse_range_float(text)?;
    Some(ScoreBound {
        value: normalize(value),
        exclusive,
    })
}

/// Formats a score as Redis 7.2 does (`fpconv_dtoa`: shortest round-trip digits; plain
/// notation for moderate exponents, `1e+20` / `1.5e-7` style otherwise; `inf` / `-inf`).
#[must_use]
pub fn format_score(score: f64) -> String {
    if score.is_nan() {
        return "nan".into();
    }
    if score.is_infinite() {
        return if score > 0.0 { "inf" } else { "-inf" }.into();
    }
    let sign = if score.is_sign_negative() { "-" } else { "" };
    if score == 0.0 {
        return format!("{sign}0");
    }
    // `{:e}` yields the shortest round-trip digits as `d.ddde±x`.
    let sci = format!("{:e}", score.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let e: i64 = exp.parse().unwrap_or(0);
    let ndigits = i64::try_from(digits.len()).unwrap_or(1);
    let k = e - (ndigits - 1); // value = digits × 10^k
    let abs_exp = e.abs();
    let body = if k >= 0 && abs_exp < ndigits + 7 {
        format!("{digits}{}", "0".repeat(usize::try_from(k).unwrap_or(0)))
    } else if k < 0 && (k > -7 || abs_exp < 4) {
        let offset = ndigits + k;
        if offset <= 0 {
            let zeros = "0".repeat(usize::try_from(-offset).unwrap_or(0));
            format!("0.{zeros}{digits}")
        } else {
            let (int, frac) = digits.split_at(usize::try_from(offset).unwrap_or(0));
            format!("{int}.{frac}")
        }
    } else {
        let (first, rest) = digits.split_at(1.min(digits.len()));
        let dot = if rest.is_empty() { "" } else { "." };
        let esign = if e < 0 { '-' } else { '+' };
        format!("{first}{dot}{rest}e{esign}{abs_exp}")
    };
    format!("{sign}{body}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_preserves_order_and_round_trips() {
        let values = [
            f64::NEG_INFINITY,
            -1e300,
            -2.5,
            -1.0,
            -f64::MIN_POSITIVE,
            0.0,
            f64::MIN_POSITIVE,
            1.0,
            1.5,
            1e300,
            f64::INFINITY,
        ];
        for pair in values.windows(2) {
            assert!(encode_score(pair[0]) < encode_score(pair[1]), "{pair:?}");
        }
        for v in values {
            assert_eq!(decode_score(encode_score(v)), v);
            assert_eq!(decode_member_value(&encode_member_value(v)).unwrap(), v);
        }
        assert_eq!(encode_score(-0.0), encode_score(0.0));
        assert!(decode_member_value(&[2, 0, 0, 0, 0, 0, 0, 0, 0]).is_err());
        assert!(decode_member_value(&[1, 0]).is_err());
    }

    #[test]
    fn pop_hints_round_trip_and_widen() {
        let none = PopHints::default();
        assert!(none.encode().is_empty());
        assert_eq!(PopHints::decode(&[]).unwrap(), none);
        let mut hints = PopHints {
            floor: Some(score_suffix(2.0, b"m")),
            ceiling: Some(score_suffix(9.0, b"")),
        };
        assert_eq!(PopHints::decode(&hints.encode()).unwrap(), hints);
        let only_ceiling = PopHints {
            floor: None,
            ceiling: Some(vec![7]),
        };
        assert_eq!(
            PopHints::decode(&only_ceiling.encode()).unwrap(),
            only_ceiling
        );
        assert!(!hints.note_insert(&score_suffix(5.0, b"x")));
        assert!(hints.note_insert(&score_suffix(1.0, b"x")));
        assert_eq!(hints.floor, Some(score_suffix(1.0, b"x")));
        assert!(hints.note_insert(&score_suffix(10.0, b"x")));
        assert_eq!(hints.ceiling, Some(score_suffix(10.0, b"x")));
        assert!(PopHints::decode(&[4]).is_err());
        assert!(PopHints::decode(&[1, 0, 0, 0, 9]).is_err());
        assert!(PopHints::decode(&[1, 0, 0, 0, 0, 5]).is_err());
    }

    #[test]
    fn parsing_follows_strtod_rules() {
        assert_eq!(parse_float_opt(b"1.5"), Some(1.5));
        assert_eq!(parse_float_opt(b"-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_float_opt(b"+inf"), Some(f64::INFINITY));
        assert_eq!(parse_float_opt(b"1e3"), Some(1000.0));
        for bad in [&b""[..], b"nan", b" 1", b"1 ", b"abc", b"1e400", b"1e-400"] {
            assert_eq!(parse_float_opt(bad), None, "{bad:?}");
        }
        assert_eq!(
            parse_score_bound(b"(2"),
            Some(ScoreBound {
                value: 2.0,
                exclusive: true
            })
        );
        assert_eq!(parse_score_bound(b"(x"), None);
    }

    #[test]
    fn range_ends_parse_as_bare_strtod() {
        assert_eq!(parse_range_float(b""), Some(0.0));
        assert_eq!(parse_range_float(b" 1"), Some(1.0));
        assert_eq!(parse_range_float(b"1e400"), Some(f64::INFINITY));
        assert_eq!(parse_range_float(b"0x10"), Some(16.0));
        for bad in [&b"  "[..], b"1 ", b"1e", b"nan", b"x"] {
            assert_eq!(parse_range_float(bad), None, "{bad:?}");
        }
        assert_eq!(
            parse_score_bound(b"("),
            Some(ScoreBound {
                value: 0.0,
                exclusive: true
            })
        );
    }

    #[test]
    fn hex_floats_parse_as_strtod_does() {
        assert_eq!(parse_float_opt(b"0x10"), Some(16.0));
        assert_eq!(parse_float_opt(b"-0X1.8p1"), Some(-3.0));
        assert_eq!(parse_float_opt(b"0x.8"), Some(0.5));
        assert_eq!(parse_float_opt(b"0x1p-2"), Some(0.25));
        assert_eq!(parse_float_opt(b"+0xffP+4"), Some(4080.0));
        for bad in [
            &b"0x"[..],
            b"0x1g",
            b"0x1p",
            b"0x1p+",
            b"0x1p99999",
            b" 0x1",
            b"0x.p1",
        ] {
            assert_eq!(parse_float_opt(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn formatting_matches_redis() {
        let cases = [
            (1.0, "1"),
            (1.5, "1.5"),
            (-2.25, "-2.25"),
            (0.1, "0.1"),
            (5000.0, "5000"),
            (10_000_000.0, "10000000"),
            (1e20, "1e+20"),
            (1.5e-7, "1.5e-7"),
            (0.000001, "0.000001"),
            (123456.789, "123456.789"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (0.0, "0"),
            (1e100, "1e+100"),
        ];
        for (value, text) in cases {
            assert_eq!(format_score(value), text, "{value}");
        }
    }
}
