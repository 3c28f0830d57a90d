//! Field-to-column conversion for LOAD DATA. Strict (the default, `STRICT_TRANS_TABLES`): the
//! INSERT rules of [`crate::coerce`], every problem an error. Lenient (IGNORE, or LOCAL, where
//! MySQL turns data errors into warnings because it cannot stop the client's transfer): the
//! value MySQL's non-strict mode stores plus the warning it raises — a numeric prefix with 1265
//! (`'12abc'` → 12), 0 with 1366 for no number at all, the nearest bound with 1264, text cut to
//! the column length with 1265, the implicit default with 1263 for NULL in a NOT NULL column.
//! What MySQL would store as a zero date has no representation here and stays an error.

use crate::catalog::ColumnDef;
use crate::coerce;
use crate::error::{SqlError, SqlResult};
use crate::types::{Datum, SqlType};

/// One condition for `SHOW WARNINGS`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// `Warning` or `Note`.
    pub level: &'static str,
    /// MySQL error number.
    pub code: u16,
    /// The message, as MySQL words it.
    pub message: String,
}

impl Warning {
    /// A `Warning`-level condition from an error.
    #[must_use]
    pub fn from_error(e: &SqlError) -> Self {
        Self {
            level: "Warning",
            code: e.code(),
            message: e.to_string(),
        }
    }

    fn truncated(col: &ColumnDef, row: usize) -> Self {
        Self {
            level: "Warning",
            code: 1265,
            message: format!("Data truncated for column '{}' at row {row}", col.name),
        }
    }
}

/// The implicit default MySQL uses when a NOT NULL column gets no usable value.
#[must_use]
pub fn implicit_default(ty: SqlType) -> Option<Datum> {
    match ty {
        t if t.is_integer() => Some(Datum::Int(0)),
        SqlType::Decimal { scale, .. } => Some(Datum::Decimal { unscaled: 0, scale }),
        SqlType::Double | SqlType::Float => Some(Datum::Double(0.0)),
        t if t.is_text() => Some(Datum::Bytes(Vec::new())),
        SqlType::Blob => Some(Datum::Bytes(Vec::new())),
        _ => None,
    }
}

/// Converts `d` for `col` (row `row`, 1-based); lenient conversions push their warning.
pub fn convert(
    d: &Datum,
    col: &ColumnDef,
    row: usize,
    lenient: bool,
    warnings: &mut Vec<Warning>,
) -> SqlResult<Datum> {
    let e = match coerce::coerce(d, col, row) {
        Ok(v) => return Ok(v),
        Err(e) if !lenient => return Err(e),
        Err(e) => e,
    };
    match &e {
        SqlError::IncorrectValue { .. } if is_numeric(col.ty) => {
            let text = match d {
                Datum::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
                _ => return Err(e),
            };
            let prefix = numeric_prefix(&text);
            if prefix.is_empty() {
                warnings.push(Warning::from_error(&e));
                return implicit_default(col.ty).ok_or(e);
            }
            warnings.push(Warning::truncated(col, row));
            let shorter = Datum::Bytes(prefix.as_bytes().to_vec());
            match coerce::coerce(&shorter, col, row) {
                Ok(v) => Ok(v),
                Err(SqlError::OutOfRange { .. }) => Ok(clamp(col.ty, prefix.starts_with('-'))),
                Err(other) => Err(other),
            }
        }
        SqlError::OutOfRange { .. } => {
            warnings.push(Warning::from_error(&e));
            let negative = match d {
                Datum::Bytes(b) => b.trim_ascii_start().starts_with(b"-"),
                Datum::Int(v) => *v < 0,
                Datum::Decimal { unscaled, .. } => *unscaled < 0,
                Datum::Double(f) => *f < 0.0,
                _ => false,
            };
            Ok(clamp(col.ty, negative))
        }
        SqlError::DataTooLong { .. } => {
            warnings.push(Warning::truncated(col, row));
            let limit = match col.ty {
                SqlType::Char { len } | SqlType::Varchar { len } => len as usize,
                _ => 65_535,
            };
            let bytes = match d {
                Datum::Bytes(b) => b.clone(),
                _ => return Err(e),
            };
            let cut = if col.ty == SqlType::Text {
                bytes.get(..limit).unwrap_or(&bytes).to_vec()
            } else {
                String::from_utf8_lossy(&bytes)
                    .chars()
                    .take(limit)
                    .collect::<String>()
                    .into_bytes()
            };
            coerce::coerce(&Datum::Bytes(cut), col, row)
        }
        _ => Err(e),
    }
}

fn is_numeric(ty: SqlType) -> bool {
    ty.is_integer()
        || matches!(
            ty,
            SqlType::Decimal { .. } | SqlType::Double | SqlType::Float
        )
}

/// The longest leading part of `s` (after spaces) that is a number.
fn numeric_prefix(s: &str) -> &str {
    let t = s.trim_start();
    let b = t.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let from = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i > from
    };
    let mut any = digits(&mut i);
    if b.get(i) == Some(&b'.') {
        let mut j = i + 1;
        if digits(&mut j) || any {
            any = true;
            i = j;
        }
    }
    if !any {
        return "";
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        if digits(&mut j) {
            i = j;
        }
    }
    t.get(..i).unwrap_or_default()
}

/// The bound of `ty` on the given side.
fn clamp(ty: SqlType, negative: bool) -> Datum {
    match ty {
        SqlType::Decimal { precision, scale } => {
            let max = 10i128
                .checked_pow(u32::from(precision))
                .map_or(i128::MAX, |p| p - 1);
            Datum::Decimal {
                unscaled: if negative { -max } else { max },
                scale,
            }
        }
        SqlType::Double | SqlType::Float => {
            Datum::Double(if negative { f64::MIN } else { f64::MAX })
        }
        t => {
            let (lo, hi) = t.integer_range().unwrap_or((0, 0));
            let v = if negative { lo } else { hi };
            match i64::try_from(v) {
                Ok(i) => Datum::Int(i),
                Err(_) => Datum::UInt(u64::try_from(v).unwrap_or(u64::MAX)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(ty: SqlType) -> ColumnDef {
        ColumnDef {
            name: "c".into(),
            ty,
            nullable: false,
            default: None,
            auto_increment: false,
            default_now: false,
        }
    }

    fn bytes(s: &str) -> Datum {
        Datum::Bytes(s.as_bytes().to_vec())
    }

    #[test]
    fn strict_conversion_errors_lenient_conversion_warns() {
        let int = col(SqlType::Int { unsigned: false });
        let mut w = Vec::new();
        assert_eq!(
            convert(&bytes("12abc"), &int, 3, false, &mut w)
                .unwrap_err()
                .code(),
            1366
        );
        assert_eq!(
            convert(&bytes("12abc"), &int, 3, true, &mut w).unwrap(),
            Datum::Int(12)
        );
        assert_eq!(w.pop().map(|w| w.code), Some(1265));
        assert_eq!(
            convert(&bytes(""), &int, 4, true, &mut w).unwrap(),
            Datum::Int(0)
        );
        assert_eq!(w.pop().map(|w| w.code), Some(1366));
        assert_eq!(
            convert(&bytes("99999999999"), &int, 5, true, &mut w).unwrap(),
            Datum::Int(2_147_483_647)
        );
        assert_eq!(w.pop().map(|w| w.code), Some(1264));
        let short = col(SqlType::Varchar { len: 3 });
        assert_eq!(
            convert(&bytes("abcdef"), &short, 6, true, &mut w).unwrap(),
            bytes("abc")
        );
        assert_eq!(
            w.pop().map(|w| (w.code, w.message)),
            Some((1265, "Data truncated for column 'c' at row 6".into()))
        );
        assert!(convert(&bytes("not a date"), &col(SqlType::Date), 7, true, &mut w).is_err());
    }

    #[test]
    fn numeric_prefixes() {
        assert_eq!(numeric_prefix(" -12.5e3x"), "-12.5e3");
        assert_eq!(numeric_prefix("1.x"), "1.");
        assert_eq!(numeric_prefix("abc"), "");
        assert_eq!(numeric_prefix("-"), "");
    }
}
