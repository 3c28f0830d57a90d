//! Conversion of a value into a column's type, as MySQL's strict mode does on INSERT / UPDATE:
//! strings must be fully numeric for numeric columns (else 1366), numbers must fit (else 1264),
//! strings must fit their declared length (else 1406); CHAR values lose trailing spaces.
//!
//! Invariant: a value returned by [`coerce`] encodes without error in both the key and the row
//! codec for that column type (the codecs would otherwise report corruption-like errors).

use crate::catalog::ColumnDef;
use crate::error::{SqlError, SqlResult};
use crate::types::{Datum, SqlType};
use crate::value;

fn incorrect(kind: &'static str, d: &Datum, col: &ColumnDef, row: usize) -> SqlError {
    SqlError::IncorrectValue {
        kind,
        value: value::display(d),
        column: col.name.clone(),
        row,
    }
}

fn out_of_range(col: &ColumnDef, row: usize) -> SqlError {
    SqlError::OutOfRange {
        column: col.name.clone(),
        row,
    }
}

/// Parses a whole string as an exact decimal `(unscaled, scale)`; `None` unless it is one.
fn parse_exact(s: &str) -> Option<(i128, u8)> {
    let s = s.trim();
    let (neg, body) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    if !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let digits = format!("{int}{frac}");
    let v: i128 = if digits.is_empty() {
        0
    } else {
        digits.parse().ok()?
    };
    let scale = u8::try_from(frac.len()).ok()?;
    Some((if neg { -v } else { v }, scale))
}

/// Number from a string in strict mode: exact decimals, or floats with an exponent.
fn parse_number(b: &[u8]) -> Option<Datum> {
    let s = std::str::from_utf8(b).ok()?;
    if let Some((u, sc)) = parse_exact(s) {
        return Some(Datum::Decimal {
            unscaled: u,
            scale: sc,
        });
    }
    let f: f64 = s.trim().parse().ok()?;
    f.is_finite().then_some(Datum::Double(f))
}

fn to_integer(d: &Datum, col: &ColumnDef, row: usize) -> SqlResult<i128> {
    let exact = match d {
        Datum::Int(v) => return Ok(i128::from(*v)),
        Datum::UInt(v) => return Ok(i128::from(*v)),
        Datum::Bytes(b) => parse_number(b).ok_or_else(|| incorrect("integer", d, col, row))?,
        other => other.clone(),
    };
    match exact {
        Datum::Decimal { unscaled, scale } => {
            Datum::rescale_decimal(unscaled, scale, 0).ok_or_else(|| out_of_range(col, row))
        }
        Datum::Double(f) => {
            let r = f.round();
            if r.abs() < 1.8e19 {
                Ok(r as i128)
            } else {
                Err(out_of_range(col, row))
            }
        }
        Datum::Date(_) | Datum::DateTime(_) => value::to_f64(&exact)
            .map(|f| f as i128)
            .ok_or_else(|| incorrect("integer", d, col, row)),
        _ => Err(incorrect("integer", d, col, row)),
    }
}

fn text_len_limit(ty: SqlType) -> Option<usize> {
    match ty {
        SqlType::Char { len } | SqlType::Varchar { len } => usize::try_from(len).ok(),
        SqlType::Text => Some(65_535),
        _ => None,
    }
}

/// Converts `d` into the type of `col`; `row` (1-based) is used in error messages.
/// NULL passes through (the caller checks NOT NULL).
pub fn coerce(d: &Datum, col: &ColumnDef, row: usize) -> SqlResult<Datum> {
    if d.is_null() {
        return Ok(Datum::Null);
    }
    let ty = col.ty;
    Ok(match ty {
        t if t.is_integer() => {
            let v = to_integer(d, col, row)?;
            let (lo, hi) = t.integer_range().unwrap_or((i128::MIN, i128::MAX));
            if v < lo || v > hi {
                return Err(out_of_range(col, row));
            }
            match i64::try_from(v) {
                Ok(i) => Datum::Int(i),
                Err(_) => Datum::UInt(u64::try_from(v).map_err(|_| out_of_range(col, row))?),
            }
        }
        SqlType::Decimal { precision, scale } => {
            let (u, s) = match d {
                Datum::Int(v) => (i128::from(*v), 0),
                Datum::UInt(v) => (i128::from(*v), 0),
                Datum::Decimal { unscaled, scale } => (*unscaled, *scale),
                Datum::Bytes(b) => match parse_number(b) {
                    Some(Datum::Decimal { unscaled, scale }) => (unscaled, scale),
                    Some(Datum::Double(f)) => {
                        float_to_decimal(f, scale).ok_or_else(|| out_of_range(col, row))?
                    }
                    _ => return Err(incorrect("decimal", d, col, row)),
                },
                Datum::Double(f) => {
                    float_to_decimal(*f, scale).ok_or_else(|| out_of_range(col, row))?
                }
                _ => return Err(incorrect("decimal", d, col, row)),
            };
            let v = Datum::rescale_decimal(u, s, scale).ok_or_else(|| out_of_range(col, row))?;
            let limit = 10i128
                .checked_pow(u32::from(precision))
                .unwrap_or(i128::MAX);
            if v.abs() >= limit {
                return Err(out_of_range(col, row));
            }
            Datum::Decimal { unscaled: v, scale }
        }
        SqlType::Double | SqlType::Float => match d {
            Datum::Bytes(b) => match parse_number(b) {
                Some(n) => Datum::Double(value::to_f64(&n).unwrap_or(0.0)),
                None => return Err(incorrect("double", d, col, row)),
            },
            other => {
                Datum::Double(value::to_f64(other).ok_or_else(|| incorrect("double", d, col, row))?)
            }
        },
        SqlType::Char { .. } | SqlType::Varchar { .. } | SqlType::Text | SqlType::Blob => {
            let mut bytes = value::to_text(d).unwrap_or_default();
            if matches!(ty, SqlType::Char { .. }) {
                while bytes.last() == Some(&b' ') {
                    bytes.pop();
                }
            }
            if let Some(limit) = text_len_limit(ty) {
                let len = if ty == SqlType::Text {
                    bytes.len()
                } else {
                    String::from_utf8_lossy(&bytes).chars().count()
                };
                if len > limit {
                    return Err(SqlError::DataTooLong {
                        column: col.name.clone(),
                        row,
                    });
                }
            }
            Datum::Bytes(bytes)
        }
        SqlType::Date => match d {
            Datum::Date(_) => d.clone(),
            Datum::DateTime(us) => Datum::Date(
                i32::try_from(us.div_euclid(86_400_000_000)).map_err(|_| out_of_range(col, row))?,
            ),
            Datum::Bytes(b) => match value::parse_datetime(&String::from_utf8_lossy(b)) {
                Some((days, _)) => Datum::Date(days),
                None => return Err(incorrect("date", d, col, row)),
            },
            _ => return Err(incorrect("date", d, col, row)),
        },
        SqlType::DateTime | SqlType::Timestamp => match d {
            Datum::DateTime(_) => d.clone(),
            Datum::Date(days) => Datum::DateTime(i64::from(*days) * 86_400_000_000),
            Datum::Bytes(b) => match value::parse_datetime(&String::from_utf8_lossy(b)) {
                Some((_, us)) => Datum::DateTime(us),
                None => return Err(incorrect("datetime", d, col, row)),
            },
            _ => return Err(incorrect("datetime", d, col, row)),
        },
        _ => return Err(incorrect("value", d, col, row)),
    })
}

fn float_to_decimal(f: f64, scale: u8) -> Option<(i128, u8)> {
    let scaled = (f * 10f64.powi(i32::from(scale))).round();
    (scaled.abs() < 1e38).then_some((scaled as i128, scale))
}

/// Coerces and checks NOT NULL.
pub fn coerce_for_column(d: &Datum, col: &ColumnDef, row: usize) -> SqlResult<Datum> {
    let v = coerce(d, col, row)?;
    if v.is_null() && !col.nullable {
        return Err(SqlError::NotNull(col.name.clone()));
    }
    Ok(v)
}
