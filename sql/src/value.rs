//! Operations on [`Datum`] with MySQL semantics: comparison (numbers against strings compare as
//! doubles, strings compare case-insensitively as under the default collation), arithmetic
//! (integer → exact with overflow errors, DECIMAL exact, anything with a double or a string →
//! double), text conversion, and date/datetime parsing and formatting.
//!
//! Invariants: NULL propagates (callers check [`Datum::is_null`] first; comparisons with NULL
//! return `None`); no function here panics on any input.

use crate::error::{SqlError, SqlResult};
use crate::types::Datum;
use std::cmp::Ordering;

/// MySQL's `div_precision_increment`: extra scale digits of `/` results.
pub const DIV_PRECISION_INCREMENT: u8 = 4;
/// Largest DECIMAL scale we keep.
pub const MAX_DECIMAL_SCALE: u8 = 30;

/// Days since 1970-01-01 of a civil date (proleptic Gregorian).
#[must_use]
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (i64::from(m) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date of a day number.
#[must_use]
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

const MICROS_PER_DAY: i64 = 86_400_000_000;

/// Parses `YYYY-MM-DD` (days) or `YYYY-MM-DD[ T]hh:mm:ss[.ffffff]` (micros); `None` if malformed.
#[must_use]
pub fn parse_datetime(s: &str) -> Option<(i32, i64)> {
    let s = s.trim();
    let (date, time) = match s.find([' ', 'T']) {
        Some(i) => (s.get(..i)?, Some(s.get(i + 1..)?)),
        None => (s, None),
    };
    let mut parts = date.split('-');
    let y: i64 = parts.next()?.parse().ok()?;
    let m: u32 = parts.next()?.parse().ok()?;
    let d: u32 = parts.next()?.parse().ok()?;
    if parts.next().is_some() || !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let days = days_from_civil(y, m, d);
    if civil_from_days(days) != (y, m, d) {
        return None;
    }
    let mut micros = days.checked_mul(MICROS_PER_DAY)?;
    if let Some(t) = time {
        let (hms, frac) = match t.split_once('.') {
            Some((a, b)) => (a, Some(b)),
            None => (t, None),
        };
        let mut p = hms.split(':');
        let h: i64 = p.next()?.parse().ok()?;
        let mi: i64 = p.next().unwrap_or("0").parse().ok()?;
        let sec: i64 = p.next().unwrap_or("0").parse().ok()?;
        if h > 23 || mi > 59 || sec > 59 {
            return None;
        }
        let mut us = 0i64;
        if let Some(f) = frac {
            let digits: String = f.chars().take(6).collect();
            if !digits.chars().all(|c| c.is_ascii_digit()) {
                return None;
            }
            us = format!("{digits:0<6}").parse().ok()?;
        }
        micros += ((h * 60 + mi) * 60 + sec) * 1_000_000 + us;
    }
    Some((i32::try_from(days).ok()?, micros))
}

/// Formats a date as `YYYY-MM-DD`.
#[must_use]
pub fn format_date(days: i32) -> String {
    let (y, m, d) = civil_from_days(i64::from(days));
    format!("{y:04}-{m:02}-{d:02}")
}

/// The current time as whole seconds since the Unix epoch, UTC (the server's
/// `@@system_time_zone`): the instant of `NOW()` and `DEFAULT CURRENT_TIMESTAMP`.
#[must_use]
pub fn now_seconds() -> i64 {
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(since_epoch.as_secs()).unwrap_or(i64::MAX)
}

/// Formats a datetime as `YYYY-MM-DD hh:mm:ss[.ffffff]`.
#[must_use]
pub fn format_datetime(micros: i64) -> String {
    let days = micros.div_euclid(MICROS_PER_DAY);
    let rem = micros.rem_euclid(MICROS_PER_DAY);
    let (y, m, d) = civil_from_days(days);
    let secs = rem / 1_000_000;
    let us = rem % 1_000_000;
    let base = format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    );
    if us == 0 {
        base
    } else {
        format!("{base}.{us:06}")
    }
}

/// Formats a decimal.
#[must_use]
pub fn format_decimal(unscaled: i128, scale: u8) -> String {
    if scale == 0 {
        return unscaled.to_string();
    }
    let digits = unscaled.unsigned_abs().to_string();
    let scale = usize::from(scale);
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = padded.split_at(padded.len() - scale);
    let sign = if unscaled < 0 { "-" } else { "" };
    format!("{sign}{int}.{frac}")
}

/// Formats a double the way MySQL prints it (shortest round-trip form).
#[must_use]
pub fn format_double(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

/// The value's text (as the text protocol sends it); `None` for NULL.
#[must_use]
pub fn to_text(d: &Datum) -> Option<Vec<u8>> {
    Some(match d {
        Datum::Null => return None,
        Datum::Int(v) => v.to_string().into_bytes(),
        Datum::UInt(v) => v.to_string().into_bytes(),
        Datum::Double(v) => format_double(*v).into_bytes(),
        Datum::Decimal { unscaled, scale } => format_decimal(*unscaled, *scale).into_bytes(),
        Datum::Bytes(b) => b.clone(),
        Datum::Date(v) => format_date(*v).into_bytes(),
        Datum::DateTime(v) => format_datetime(*v).into_bytes(),
    })
}

/// Text for messages (`Duplicate entry '…'`); NULL prints as `NULL`.
#[must_use]
pub fn display(d: &Datum) -> String {
    to_text(d).map_or_else(
        || "NULL".into(),
        |b| String::from_utf8_lossy(&b).into_owned(),
    )
}

/// Parses the longest numeric prefix of a string as MySQL does in numeric context ("12ab" → 12).
#[must_use]
pub fn str_to_f64(b: &[u8]) -> f64 {
    let s = String::from_utf8_lossy(b);
    let s = s.trim_start();
    let mut end = 0;
    let mut seen_digit = false;
    let mut seen_dot = false;
    let mut seen_e = false;
    for (i, c) in s.char_indices() {
        let ok = match c {
            '0'..='9' => {
                seen_digit = true;
                true
            }
            '+' | '-' => i == 0 || s[..i].ends_with(['e', 'E']),
            '.' if !seen_dot && !seen_e => {
                seen_dot = true;
                true
            }
            'e' | 'E' if seen_digit && !seen_e => {
                seen_e = true;
                true
            }
            _ => false,
        };
        if !ok {
            break;
        }
        end = i + c.len_utf8();
    }
    let mut prefix = &s[..end];
    while !prefix.is_empty() && prefix.parse::<f64>().is_err() {
        prefix = &prefix[..prefix.len() - 1];
    }
    prefix.parse().unwrap_or(0.0)
}

/// Numeric value as a double (strings by their numeric prefix).
#[must_use]
pub fn to_f64(d: &Datum) -> Option<f64> {
    Some(match d {
        Datum::Null => return None,
        Datum::Int(v) => *v as f64,
        Datum::UInt(v) => *v as f64,
        Datum::Double(v) => *v,
        Datum::Decimal { unscaled, scale } => *unscaled as f64 / 10f64.powi(i32::from(*scale)),
        Datum::Bytes(b) => str_to_f64(b),
        Datum::Date(v) => {
            let (y, m, d) = civil_from_days(i64::from(*v));
            (y * 10_000 + i64::from(m) * 100 + i64::from(d)) as f64
        }
        Datum::DateTime(v) => *v as f64,
    })
}

/// Exact value as (unscaled, scale) for integers and decimals.
fn as_decimal(d: &Datum) -> Option<(i128, u8)> {
    match d {
        Datum::Int(v) => Some((i128::from(*v), 0)),
        Datum::UInt(v) => Some((i128::from(*v), 0)),
        Datum::Decimal { unscaled, scale } => Some((*unscaled, *scale)),
        _ => None,
    }
}

/// Truth value: `None` for NULL, else nonzero.
#[must_use]
pub fn truth(d: &Datum) -> Option<bool> {
    match d {
        Datum::Null => None,
        Datum::Int(v) => Some(*v != 0),
        Datum::UInt(v) => Some(*v != 0),
        Datum::Decimal { unscaled, .. } => Some(*unscaled != 0),
        other => to_f64(other).map(|f| f != 0.0),
    }
}

/// How [`compare`] orders two strings (the case-insensitive collation).
#[must_use]
pub fn string_cmp(a: &[u8], b: &[u8]) -> Ordering {
    ci_cmp(a, b)
}

/// Compares as the case-insensitive collation does (ASCII letters folded to lower case). Equal
/// bytes are skipped eight at a time; only a differing pair is folded.
fn ci_cmp(a: &[u8], b: &[u8]) -> Ordering {
    let (mut x, mut y) = (a, b);
    loop {
        while let (Some((cx, rx)), Some((cy, ry))) =
            (x.split_first_chunk::<8>(), y.split_first_chunk::<8>())
        {
            if u64::from_ne_bytes(*cx) != u64::from_ne_bytes(*cy) {
                break;
            }
            (x, y) = (rx, ry);
        }
        match (x.split_first(), y.split_first()) {
            (Some((&bx, rx)), Some((&by, ry))) => {
                let (lx, ly) = (bx.to_ascii_lowercase(), by.to_ascii_lowercase());
                if lx != ly {
                    return lx.cmp(&ly);
                }
                (x, y) = (rx, ry);
            }
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
        }
    }
}

fn temporal_micros(d: &Datum) -> Option<i64> {
    match d {
        Datum::Date(v) => Some(i64::from(*v) * MICROS_PER_DAY),
        Datum::DateTime(v) => Some(*v),
        Datum::Bytes(b) => parse_datetime(&String::from_utf8_lossy(b)).map(|(_, us)| us),
        _ => None,
    }
}

/// SQL comparison; `None` if either side is NULL.
#[must_use]
pub fn compare(a: &Datum, b: &Datum) -> Option<Ordering> {
    if a.is_null() || b.is_null() {
        return None;
    }
    match (a, b) {
        (Datum::Int(x), Datum::Int(y)) => return Some(x.cmp(y)),
        (Datum::UInt(x), Datum::UInt(y)) => return Some(x.cmp(y)),
        (Datum::Int(x), Datum::UInt(y)) => return Some(i128::from(*x).cmp(&i128::from(*y))),
        (Datum::UInt(x), Datum::Int(y)) => return Some(i128::from(*x).cmp(&i128::from(*y))),
        (Datum::Bytes(x), Datum::Bytes(y)) => return Some(ci_cmp(x, y)),
        (Datum::Date(_) | Datum::DateTime(_), _) | (_, Datum::Date(_) | Datum::DateTime(_)) => {
            if let (Some(x), Some(y)) = (temporal_micros(a), temporal_micros(b)) {
                return Some(x.cmp(&y));
            }
        }
        _ => {}
    }
    if let (Some((x, sx)), Some((y, sy))) = (as_decimal(a), as_decimal(b)) {
        let s = sx.max(sy);
        if let (Some(x), Some(y)) = (
            Datum::rescale_decimal(x, sx, s),
            Datum::rescale_decimal(y, sy, s),
        ) {
            return Some(x.cmp(&y));
        }
    }
    let (x, y) = (to_f64(a)?, to_f64(b)?);
    Some(x.total_cmp(&y))
}

/// Ordering for ORDER BY: NULL first, then [`compare`].
#[must_use]
pub fn sort_cmp(a: &Datum, b: &Datum) -> Ordering {
    match (a.is_null(), b.is_null()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        _ => compare(a, b).unwrap_or(Ordering::Equal),
    }
}

/// A byte key equal for values that compare equal (GROUP BY / DISTINCT).
pub fn group_key(d: &Datum, out: &mut Vec<u8>) {
    match d {
        Datum::Null => out.push(0),
        Datum::Bytes(b) => {
            out.push(1);
            out.extend(b.iter().map(u8::to_ascii_lowercase));
            out.extend_from_slice(&[0, 0xFF]);
        }
        Datum::Double(v) => {
            out.push(2);
            out.extend_from_slice(&v.to_bits().to_be_bytes());
        }
        Datum::Date(_) | Datum::DateTime(_) => {
            out.push(3);
            out.extend_from_slice(&temporal_micros(d).unwrap_or(0).to_be_bytes());
        }
        _ => {
            let (mut u, mut s) = as_decimal(d).unwrap_or((0, 0));
            while s > 0 && u % 10 == 0 {
                u /= 10;
                s -= 1;
            }
            out.push(4);
            out.extend_from_slice(&u.to_be_bytes());
            out.push(s);
        }
    }
}

/// Arithmetic operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
    IntDiv,
    Mod,
}

fn overflow(op: ArithOp, a: &Datum, b: &Datum) -> SqlError {
    SqlError::ValueOutOfRange(format!(
        "BIGINT value is out of range in '({} {op:?} {})'",
        display(a),
        display(b)
    ))
}

/// Integer result: signed unless an operand is unsigned (then it must be non-negative), as MySQL.
fn int_result(v: i128, op: ArithOp, a: &Datum, b: &Datum) -> SqlResult<Datum> {
    let unsigned = matches!(a, Datum::UInt(_)) || matches!(b, Datum::UInt(_));
    if !unsigned {
        i64::try_from(v)
            .map(Datum::Int)
            .map_err(|_| overflow(op, a, b))
    } else if let Ok(u) = u64::try_from(v) {
        Ok(Datum::UInt(u))
    } else {
        Err(overflow(op, a, b))
    }
}

/// `a op b` with MySQL typing. Division by zero yields NULL.
pub fn arith(op: ArithOp, a: &Datum, b: &Datum) -> SqlResult<Datum> {
    if a.is_null() || b.is_null() {
        return Ok(Datum::Null);
    }
    // Integer addition and subtraction that stay in range (the general path below gives the
    // same result, and the same error when they do not).
    if let (Datum::Int(x), Datum::Int(y)) = (a, b) {
        let fast = match op {
            ArithOp::Add => x.checked_add(*y),
            ArithOp::Sub => x.checked_sub(*y),
            _ => None,
        };
        if let Some(v) = fast {
            return Ok(Datum::Int(v));
        }
    }
    let exact = as_decimal(a).zip(as_decimal(b));
    let both_int =
        matches!(a, Datum::Int(_) | Datum::UInt(_)) && matches!(b, Datum::Int(_) | Datum::UInt(_));
    if let Some(((x, sx), (y, sy))) = exact {
        let s = sx.max(sy);
        let (Some(xs), Some(ys)) = (
            Datum::rescale_decimal(x, sx, s),
            Datum::rescale_decimal(y, sy, s),
        ) else {
            return Err(overflow(op, a, b));
        };
        let res = match op {
            ArithOp::Add => xs.checked_add(ys).map(|v| (v, s)),
            ArithOp::Sub => xs.checked_sub(ys).map(|v| (v, s)),
            ArithOp::Mul => x.checked_mul(y).map(|v| (v, sx.saturating_add(sy))),
            ArithOp::Div => {
                if y == 0 {
                    return Ok(Datum::Null);
                }
                let out_scale = sx
                    .saturating_add(DIV_PRECISION_INCREMENT)
                    .min(MAX_DECIMAL_SCALE);
                // x/10^sx ÷ y/10^sy = (x·10^(out+sy-sx)) / y at scale `out`.
                let shift = i32::from(out_scale) + i32::from(sy) - i32::from(sx);
                let num = u32::try_from(shift)
                    .ok()
                    .and_then(|sh| 10i128.checked_pow(sh))
                    .and_then(|p| x.checked_mul(p));
                num.map(|n| {
                    let q = n / y;
                    let r = n % y;
                    let q = if r.abs() * 2 >= y.abs() {
                        q + n.signum() * y.signum()
                    } else {
                        q
                    };
                    (q, out_scale)
                })
            }
            ArithOp::IntDiv => {
                if ys == 0 {
                    return Ok(Datum::Null);
                }
                return int_result(xs / ys, op, a, b);
            }
            ArithOp::Mod => {
                if ys == 0 {
                    return Ok(Datum::Null);
                }
                Some((xs % ys, s))
            }
        };
        let Some((v, scale)) = res else {
            return Err(overflow(op, a, b));
        };
        if both_int && scale == 0 {
            return int_result(v, op, a, b);
        }
        return Ok(Datum::Decimal { unscaled: v, scale });
    }
    let (Some(x), Some(y)) = (to_f64(a), to_f64(b)) else {
        return Ok(Datum::Null);
    };
    let v = match op {
        ArithOp::Add => x + y,
        ArithOp::Sub => x - y,
        ArithOp::Mul => x * y,
        ArithOp::Div | ArithOp::Mod | ArithOp::IntDiv if y == 0.0 => return Ok(Datum::Null),
        ArithOp::Div => x / y,
        ArithOp::Mod => x % y,
        ArithOp::IntDiv => {
            let q = (x / y).trunc();
            return if q.abs() < 9.2e18 {
                Ok(Datum::Int(q as i64))
            } else {
                Err(overflow(op, a, b))
            };
        }
    };
    if v.is_finite() {
        Ok(Datum::Double(v))
    } else {
        Err(SqlError::ValueOutOfRange(format!(
            "DOUBLE value is out of range in '({} {op:?} {})'",
            display(a),
            display(b)
        )))
    }
}

/// Unary minus.
pub fn negate(a: &Datum) -> SqlResult<Datum> {
    arith(ArithOp::Sub, &Datum::Int(0), a)
}

/// Rounds to `digits` decimals (half away from zero, as MySQL for exact values).
#[must_use]
pub fn round(a: &Datum, digits: i64) -> Datum {
    match a {
        Datum::Int(_) | Datum::UInt(_) if digits >= 0 => a.clone(),
        Datum::Decimal { unscaled, scale } => {
            let to = u8::try_from(digits.clamp(0, i64::from(*scale))).unwrap_or(0);
            match Datum::rescale_decimal(*unscaled, *scale, to) {
                Some(v) => Datum::Decimal {
                    unscaled: v,
                    scale: to,
                },
                None => Datum::Null,
            }
        }
        other => match to_f64(other) {
            Some(x) => {
                let p = 10f64.powi(i32::try_from(digits.clamp(-30, 30)).unwrap_or(0));
                Datum::Double((x * p).round() / p)
            }
            None => Datum::Null,
        },
    }
}

/// SQL LIKE with `%` and `_`, case-insensitive (default collation), `escape` as escape char.
#[must_use]
pub fn like(text: &[u8], pattern: &[u8], escape: u8) -> bool {
    let t: Vec<u8> = text.iter().map(u8::to_ascii_lowercase).collect();
    let p: Vec<u8> = pattern.iter().map(u8::to_ascii_lowercase).collect();
    // Iterative matcher with backtracking to the last `%`.
    let (mut ti, mut pi) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        let pc = p.get(pi).copied();
        match pc {
            Some(b'%') => {
                star = Some((pi, ti));
                pi += 1;
                continue;
            }
            Some(c) if c == escape && pi + 1 < p.len() && p.get(pi + 1) == t.get(ti) => {
                pi += 2;
                ti += 1;
                continue;
            }
            Some(b'_') => {
                pi += 1;
                ti += 1;
                continue;
            }
            Some(c) if Some(&c) == t.get(ti) => {
                pi += 1;
                ti += 1;
                continue;
            }
            _ => {}
        }
        match star {
            Some((sp, st)) => {
                pi = sp + 1;
                ti = st + 1;
                star = Some((sp, st + 1));
            }
            None => return false,
        }
    }
    p.get(pi..)
        .is_some_and(|rest| rest.iter().all(|&c| c == b'%'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn reference_ci_cmp(a: &[u8], b: &[u8]) -> Ordering {
        a.iter()
            .map(u8::to_ascii_lowercase)
            .cmp(b.iter().map(u8::to_ascii_lowercase))
    }

    proptest! {
        #[test]
        fn ci_cmp_folds_case_like_the_bytewise_comparison(
            a in proptest::collection::vec(prop_oneof![Just(b'a'), Just(b'A'), Just(b'b'), Just(b'-'), any::<u8>()], 0..40),
            b in proptest::collection::vec(prop_oneof![Just(b'a'), Just(b'A'), Just(b'b'), Just(b'-'), any::<u8>()], 0..40),
        ) {
            prop_assert_eq!(ci_cmp(&a, &b), reference_ci_cmp(&a, &b));
            let mut c = a.clone();
            c.iter_mut().for_each(|x| *x = x.to_ascii_uppercase());
            prop_assert_eq!(ci_cmp(&a, &c), Ordering::Equal);
        }

        #[test]
        fn integer_comparisons_agree_with_exact_decimal_ones(x in any::<i64>(), y in any::<u64>()) {
            let dec = |v: i128| Datum::Decimal { unscaled: v * 10, scale: 1 };
            for (a, b) in [
                (Datum::Int(x), Datum::UInt(y)),
                (Datum::UInt(y), Datum::Int(x)),
                (Datum::Int(x), Datum::Int(x / 3)),
                (Datum::UInt(y), Datum::UInt(y / 7)),
            ] {
                let (da, db) = (
                    dec(as_decimal(&a).map_or(0, |d| d.0)),
                    dec(as_decimal(&b).map_or(0, |d| d.0)),
                );
                prop_assert_eq!(compare(&a, &b), compare(&da, &db));
            }
            let sum = arith(ArithOp::Add, &Datum::Int(x), &Datum::Int(x / 3));
            let wide = i128::from(x) + i128::from(x / 3);
            match i64::try_from(wide) {
                Ok(v) => prop_assert_eq!(sum.ok(), Some(Datum::Int(v))),
                Err(_) => prop_assert!(sum.is_err()),
            }
        }
    }
}
