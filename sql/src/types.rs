//! SQL column types and the in-memory datum that rows and index keys are made of.
//!
//! Invariants: a [`Datum::Decimal`] carries its own scale; values stored in a DECIMAL(p,s) column are
//! always rescaled to `s` before encoding, so encoded decimals of one column compare by their
//! unscaled integers. Dates are days since 1970-01-01; datetimes are microseconds since the epoch
//! (no time zone: TIMESTAMP values are stored as given in the session's zone, UTC for now).

use std::cmp::Ordering;

/// A column type as declared in CREATE TABLE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum SqlType {
    /// TINYINT (8-bit signed unless `unsigned`).
    TinyInt { unsigned: bool },
    /// SMALLINT.
    SmallInt { unsigned: bool },
    /// INT / INTEGER.
    Int { unsigned: bool },
    /// BIGINT.
    BigInt { unsigned: bool },
    /// DECIMAL(precision, scale), precision ≤ 38.
    Decimal { precision: u8, scale: u8 },
    /// DOUBLE / REAL.
    Double,
    /// FLOAT (stored as f32 precision, carried as f64).
    Float,
    /// CHAR(n): fixed length, trailing spaces stripped on read (MySQL's default PAD behaviour).
    Char { len: u32 },
    /// VARCHAR(n).
    Varchar { len: u32 },
    /// TEXT family (character data, charset utf8mb4).
    Text,
    /// BLOB family (binary data, charset 63).
    Blob,
    /// DATE.
    Date,
    /// DATETIME.
    DateTime,
    /// TIMESTAMP.
    Timestamp,
}

impl SqlType {
    /// True for types whose values are character strings (charset utf8mb4).
    #[must_use]
    pub fn is_text(self) -> bool {
        matches!(self, Self::Char { .. } | Self::Varchar { .. } | Self::Text)
    }

    /// True for integer types.
    #[must_use]
    pub fn is_integer(self) -> bool {
        matches!(
            self,
            Self::TinyInt { .. } | Self::SmallInt { .. } | Self::Int { .. } | Self::BigInt { .. }
        )
    }

    /// The inclusive range an integer column accepts, as i128 so unsigned BIGINT fits.
    #[must_use]
    pub fn integer_range(self) -> Option<(i128, i128)> {
        let r = |bits: u32, unsigned: bool| {
            if unsigned {
                (0, (1i128 << bits) - 1)
            } else {
                (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
            }
        };
        match self {
            Self::TinyInt { unsigned } => Some(r(8, unsigned)),
            Self::SmallInt { unsigned } => Some(r(16, unsigned)),
            Self::Int { unsigned } => Some(r(32, unsigned)),
            Self::BigInt { unsigned } => Some(r(64, unsigned)),
            _ => None,
        }
    }

    /// The SQL spelling, as SHOW CREATE TABLE prints it.
    #[must_use]
    pub fn sql_name(self) -> String {
        let u = |unsigned: bool| if unsigned { " unsigned" } else { "" };
        match self {
            Self::TinyInt { unsigned } => format!("tinyint{}", u(unsigned)),
            Self::SmallInt { unsigned } => format!("smallint{}", u(unsigned)),
            Self::Int { unsigned } => format!("int{}", u(unsigned)),
            Self::BigInt { unsigned } => format!("bigint{}", u(unsigned)),
            Self::Decimal { precision, scale } => format!("decimal({precision},{scale})"),
            Self::Double => "double".into(),
            Self::Float => "float".into(),
            Self::Char { len } => format!("char({len})"),
            Self::Varchar { len } => format!("varchar({len})"),
            Self::Text => "text".into(),
            Self::Blob => "blob".into(),
            Self::Date => "date".into(),
            Self::DateTime => "datetime".into(),
            Self::Timestamp => "timestamp".into(),
        }
    }
}

/// One SQL value.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Datum {
    /// SQL NULL.
    Null,
    /// Signed integer.
    Int(i64),
    /// Unsigned integer (only for values above i64::MAX in unsigned columns).
    UInt(u64),
    /// Floating point.
    Double(f64),
    /// Exact decimal: `unscaled / 10^scale`.
    Decimal { unscaled: i128, scale: u8 },
    /// Character or binary string.
    Bytes(Vec<u8>),
    /// Days since 1970-01-01.
    Date(i32),
    /// Microseconds since 1970-01-01 00:00:00.
    DateTime(i64),
}

impl Datum {
    /// True for NULL.
    #[must_use]
    pub fn is_null(&self) -> bool {
        matches!(self, Self::Null)
    }

    /// Rescales a decimal to `scale` (rounding half away from zero when shrinking).
    /// Returns `None` on overflow.
    #[must_use]
    pub fn rescale_decimal(unscaled: i128, from: u8, to: u8) -> Option<i128> {
        match from.cmp(&to) {
            Ordering::Equal => Some(unscaled),
            Ordering::Less => unscaled.checked_mul(10i128.checked_pow(u32::from(to - from))?),
            Ordering::Greater => {
                let div = 10i128.checked_pow(u32::from(from - to))?;
                let q = unscaled / div;
                let r = unscaled % div;
                let round = if r.abs() * 2 >= div {
                    unscaled.signum()
                } else {
                    0
                };
                q.checked_add(round)
            }
        }
    }
}
