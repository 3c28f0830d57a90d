//! The one conversion between the executor's types and the boundary's: [`Datum`] ↔
//! [`Value`] and [`OutputColumn`] / catalog columns → [`ColumnDef`].
//!
//! Invariants: a result value converts without loss (decimals as their exact text, dates and
//! datetimes split into their civil parts); a column's metadata is what MySQL 8.0 reports for a
//! column of that declared type (type, display length in bytes, decimals, UNSIGNED/NOT NULL
//! flags). Parameters keep the type the client bound; temporal parameters become their
//! canonical text, which the executor then converts exactly as it converts a literal, so a
//! prepared statement and its text form accept and reject the same values.

use crate::catalog;
use crate::error::{SqlError, SqlResult};
use crate::result::OutputColumn;
use crate::types::{Datum, SqlType};
use crate::value::{civil_from_days, format_decimal};

use super::column::{ColumnDef, ColumnFlags, ColumnType, UTF8MB4_MAX_BYTES_PER_CHAR};
use super::value::{Date, DateTime, Time, Value};

const MICROS_PER_SECOND: i64 = 1_000_000;
const MICROS_PER_DAY: i64 = 86_400 * MICROS_PER_SECOND;
/// Characters in a TEXT column (65535 bytes of utf8mb4 are reported as 4 × 65535 / 4).
const TEXT_LENGTH_BYTES: u32 = 65_535 * UTF8MB4_MAX_BYTES_PER_CHAR;

/// Result metadata of one executor output column.
#[must_use]
pub fn output_column(c: &OutputColumn) -> ColumnDef {
    into_output_column(c.clone())
}

/// [`output_column`] of a column the caller no longer needs: its names move into the result.
#[must_use]
pub fn into_output_column(c: OutputColumn) -> ColumnDef {
    let OutputColumn {
        name,
        org_name,
        table,
        db,
        sql_type,
        nullable,
    } = c;
    let mut def = column_of_type("", sql_type, nullable);
    def.name = name;
    def.original_name = org_name;
    def.original_table.clone_from(&table);
    def.table = table;
    def.database = db;
    def
}

/// Metadata of a table column as COM_FIELD_LIST reports it.
#[must_use]
pub fn table_column(db: &str, table: &catalog::TableDef, index: usize) -> Option<ColumnDef> {
    let c = table.columns.get(index)?;
    let mut def = column_of_type(&c.name, c.ty, c.nullable).in_table(db, &table.name);
    if table.primary_key.contains(&index) {
        def = def.with_flags(ColumnFlags::PRIMARY_KEY);
    }
    if table.auto_increment_column() == Some(index) {
        def = def.with_flags(ColumnFlags::AUTO_INCREMENT);
    }
    Some(def)
}

fn column_of_type(name: &str, ty: SqlType, nullable: bool) -> ColumnDef {
    let int = |t: ColumnType, len: u32, unsigned: bool| {
        let def = ColumnDef::new(name, t).with_length(len);
        if unsigned {
            def.with_flags(ColumnFlags::UNSIGNED)
        } else {
            def
        }
    };
    let text_len = |chars: u32| chars.saturating_mul(UTF8MB4_MAX_BYTES_PER_CHAR);
    let def = match ty {
        SqlType::TinyInt { unsigned } => int(ColumnType::Tiny, 4 - u32::from(unsigned), unsigned),
        SqlType::SmallInt { unsigned } => int(ColumnType::Short, 6 - u32::from(unsigned), unsigned),
        SqlType::Int { unsigned } => int(ColumnType::Long, 11 - u32::from(unsigned), unsigned),
        SqlType::BigInt { unsigned } => int(ColumnType::LongLong, 20, unsigned),
        SqlType::Decimal { precision, scale } => ColumnDef::new(name, ColumnType::Decimal)
            // Digits, the sign, and the point when there is a fraction.
            .with_length(u32::from(precision) + 1 + u32::from(scale > 0))
            .with_decimals(scale),
        SqlType::Double => ColumnDef::new(name, ColumnType::Double),
        SqlType::Float => ColumnDef::new(name, ColumnType::Float),
        SqlType::Char { len } => ColumnDef::new(name, ColumnType::Char).with_length(text_len(len)),
        SqlType::Varchar { len } => {
            ColumnDef::new(name, ColumnType::VarChar).with_length(text_len(len))
        }
        SqlType::Text => ColumnDef::new(name, ColumnType::Blob).with_length(TEXT_LENGTH_BYTES),
        SqlType::Blob => ColumnDef::new(name, ColumnType::Blob)
            .binary()
            .with_length(65_535),
        SqlType::Date => ColumnDef::new(name, ColumnType::Date),
        SqlType::DateTime => ColumnDef::new(name, ColumnType::DateTime),
        SqlType::Timestamp => ColumnDef::new(name, ColumnType::Timestamp),
    };
    if nullable {
        def
    } else {
        def.with_flags(ColumnFlags::NOT_NULL)
    }
}

/// A result value for the boundary.
#[must_use]
pub fn result_value(d: Datum) -> Value {
    match d {
        Datum::Null => Value::Null,
        Datum::Int(i) => Value::Int(i),
        Datum::UInt(u) => Value::UInt(u),
        Datum::Double(f) => Value::Double(f),
        Datum::Decimal { unscaled, scale } => Value::Decimal(format_decimal(unscaled, scale)),
        Datum::Bytes(b) => Value::Bytes(b),
        Datum::Date(days) => Value::Date(civil_date(i64::from(days))),
        Datum::DateTime(micros) => {
            let days = micros.div_euclid(MICROS_PER_DAY);
            let in_day = micros.rem_euclid(MICROS_PER_DAY);
            let secs = in_day / MICROS_PER_SECOND;
            Value::DateTime(DateTime {
                date: civil_date(days),
                hour: (secs / 3600) as u8,
                minute: (secs / 60 % 60) as u8,
                second: (secs % 60) as u8,
                microsecond: (in_day % MICROS_PER_SECOND) as u32,
            })
        }
    }
}

fn civil_date(days: i64) -> Date {
    let (y, m, d) = civil_from_days(days);
    Date {
        year: u16::try_from(y).unwrap_or(0),
        month: m as u8,
        day: d as u8,
    }
}

/// A prepared-statement parameter for the executor. A malformed decimal is 1210, as MySQL
/// reports bad arguments to `mysqld_stmt_execute`.
pub fn parameter(v: Value) -> SqlResult<Datum> {
    Ok(match v {
        Value::Null => Datum::Null,
        Value::Int(i) => Datum::Int(i),
        Value::UInt(u) => i64::try_from(u).map_or(Datum::UInt(u), Datum::Int),
        Value::Float(f) => Datum::Double(f64::from(f)),
        Value::Double(f) => Datum::Double(f),
        Value::Decimal(text) => parse_decimal(&text)
            .ok_or_else(|| SqlError::WrongArguments("mysqld_stmt_execute".into()))?,
        Value::Bytes(b) => Datum::Bytes(b),
        Value::Date(d) => Datum::Bytes(date_text(&d).into_bytes()),
        Value::DateTime(dt) => Datum::Bytes(datetime_text(&dt).into_bytes()),
        Value::Time(t) => Datum::Bytes(time_text(&t).into_bytes()),
    })
}

fn parse_decimal(text: &str) -> Option<Datum> {
    let t = text.trim();
    let (negative, digits) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let (int_part, frac_part) = digits.split_once('.').unwrap_or((digits, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    if !int_part
        .bytes()
        .chain(frac_part.bytes())
        .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let scale = u8::try_from(frac_part.len()).ok()?;
    let mut unscaled: i128 = 0;
    for b in int_part.bytes().chain(frac_part.bytes()) {
        unscaled = unscaled
            .checked_mul(10)?
            .checked_add(i128::from(b - b'0'))?;
    }
    Some(Datum::Decimal {
        unscaled: if negative { -unscaled } else { unscaled },
        scale,
    })
}

fn date_text(d: &Date) -> String {
    format!("{:04}-{:02}-{:02}", d.year, d.month, d.day)
}

fn datetime_text(dt: &DateTime) -> String {
    format!(
        "{} {:02}:{:02}:{:02}.{:06}",
        date_text(&dt.date),
        dt.hour,
        dt.minute,
        dt.second,
        dt.microsecond
    )
}

fn time_text(t: &Time) -> String {
    format!(
        "{}{:02}:{:02}:{:02}.{:06}",
        if t.negative { "-" } else { "" },
        u64::from(t.days) * 24 + u64::from(t.hours),
        t.minutes,
        t.seconds,
        t.microseconds
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_row_converts_in_its_own_allocation() {
        assert_eq!(std::mem::size_of::<Value>(), std::mem::size_of::<Datum>());
        assert_eq!(std::mem::align_of::<Value>(), std::mem::align_of::<Datum>());
        let row = vec![Datum::Int(1), Datum::Bytes(b"c".to_vec()), Datum::Null];
        let at = row.as_ptr() as usize;
        let values: Vec<Value> = row.into_iter().map(result_value).collect();
        assert_eq!(values.as_ptr() as usize, at);
        assert_eq!(values[1], Value::Bytes(b"c".to_vec()));
    }

    #[test]
    fn results_convert_without_loss() {
        assert_eq!(
            result_value(Datum::Decimal {
                unscaled: -1250,
                scale: 2
            }),
            Value::Decimal("-12.50".into())
        );
        assert_eq!(
            result_value(Datum::Date(0)),
            Value::Date(Date {
                year: 1970,
                month: 1,
                day: 1
            })
        );
        let Value::DateTime(dt) = result_value(Datum::DateTime(86_400_000_000 + 3_723_000_005))
        else {
            panic!("datetime")
        };
        assert_eq!(
            (dt.date.day, dt.hour, dt.minute, dt.second, dt.microsecond),
            (2, 1, 2, 3, 5)
        );
    }

    #[test]
    fn parameters_keep_their_types() {
        assert_eq!(parameter(Value::UInt(5)).unwrap(), Datum::Int(5));
        assert_eq!(
            parameter(Value::UInt(u64::MAX)).unwrap(),
            Datum::UInt(u64::MAX)
        );
        assert_eq!(
            parameter(Value::Decimal("-0.05".into())).unwrap(),
            Datum::Decimal {
                unscaled: -5,
                scale: 2
            }
        );
        assert!(parameter(Value::Decimal("1e5".into())).is_err());
        assert!(parameter(Value::Decimal("-".into())).is_err());
    }

    #[test]
    fn column_metadata_follows_the_declared_type() {
        let c = column_of_type("id", SqlType::Int { unsigned: false }, false);
        assert_eq!((c.column_type, c.length), (ColumnType::Long, 11));
        assert!(c.flags.contains(ColumnFlags::NOT_NULL));
        let c = column_of_type("c", SqlType::Char { len: 120 }, true);
        assert_eq!((c.column_type, c.length), (ColumnType::Char, 480));
        let c = column_of_type(
            "d",
            SqlType::Decimal {
                precision: 15,
                scale: 2,
            },
            true,
        );
        assert_eq!((c.length, c.decimals), (17, 2));
    }
}
