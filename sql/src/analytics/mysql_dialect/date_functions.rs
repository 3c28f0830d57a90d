//! MySQL date functions and MySQL-only CAST targets as DataFusion UDFs (the rewrite in
//! `rewrite.rs` routes `DATE()`, `DATEDIFF`, `DAYOFWEEK`, `WEEKDAY`, `DAYOFMONTH`, `DAYOFYEAR`,
//! `LAST_DAY`, `DATE_FORMAT`, `TIMESTAMPDIFF`, `STR_TO_DATE` and `CAST(… AS SIGNED | UNSIGNED |
//! DATETIME)` to them).
//!
//! Date arguments may be DATE, DATETIME/TIMESTAMP, strings or integers (`20260102`); they are
//! read through [`date_text`](super::date_text). Invariants: NULL in gives NULL out, and text
//! that is not a valid date gives NULL, as MySQL does (it adds a warning we do not send).
//! Results have MySQL's types: DATE → Date32, DATETIME → Timestamp(µs), integers → Int64
//! (UNSIGNED → UInt64), strings → Utf8.

use super::date_text::{self, MICROS_PER_DAY, Parts};
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, Date32Array, Int64Array, StringArray, TimestampMicrosecondArray,
    UInt64Array,
};
use datafusion::arrow::datatypes::{
    DataType, Date32Type, Decimal128Type, Float64Type, Int64Type, TimeUnit,
    TimestampMicrosecondType, UInt64Type,
};
use datafusion::common::{DataFusionError, Result as DfResult, exec_err, plan_err};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Date,
    DateTime,
    DateDiff,
    DayOfWeek,
    Weekday,
    DayOfMonth,
    DayOfYear,
    LastDay,
    DateFormat,
    TimestampDiff,
    StrToDate,
    StrToDateTime,
    CastSigned,
    CastUnsigned,
}

/// One MySQL date function.
#[derive(Debug, PartialEq, Eq, Hash)]
struct DateFunction {
    kind: Kind,
    name: &'static str,
    signature: Signature,
}

/// Every function of this module, for registration.
#[must_use]
pub fn all() -> Vec<Arc<ScalarUDF>> {
    [
        (Kind::Date, "mysql_date"),
        (Kind::DateTime, "mysql_datetime"),
        (Kind::DateDiff, "mysql_datediff"),
        (Kind::DayOfWeek, "mysql_dayofweek"),
        (Kind::Weekday, "mysql_weekday"),
        (Kind::DayOfMonth, "mysql_dayofmonth"),
        (Kind::DayOfYear, "mysql_dayofyear"),
        (Kind::LastDay, "mysql_last_day"),
        (Kind::DateFormat, "mysql_date_format"),
        (Kind::TimestampDiff, "mysql_timestampdiff"),
        (Kind::StrToDate, "mysql_str_to_date"),
        (Kind::StrToDateTime, "mysql_str_to_datetime"),
        (Kind::CastSigned, "mysql_cast_signed"),
        (Kind::CastUnsigned, "mysql_cast_unsigned"),
    ]
    .into_iter()
    .map(|(kind, name)| {
        Arc::new(ScalarUDF::new_from_impl(DateFunction {
            kind,
            name,
            signature: Signature::user_defined(Volatility::Immutable),
        }))
    })
    .collect()
}

/// The type a date argument is read as.
fn temporal_arg(t: &DataType) -> DfResult<DataType> {
    Ok(match t {
        DataType::Null => DataType::Null,
        DataType::Date32 | DataType::Date64 => DataType::Date32,
        DataType::Timestamp(_, tz) => DataType::Timestamp(TimeUnit::Microsecond, tz.clone()),
        t if t.is_integer() => DataType::Utf8,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => DataType::Utf8,
        other => return plan_err!("Incorrect DATE value type: {other}"),
    })
}

/// The type a CAST AS SIGNED / UNSIGNED operand is read as.
fn numeric_arg(t: &DataType) -> DfResult<DataType> {
    Ok(match t {
        DataType::Null => DataType::Null,
        DataType::Boolean | DataType::Int8 | DataType::Int16 | DataType::Int32 => DataType::Int64,
        DataType::Int64 | DataType::UInt64 | DataType::Decimal128(..) => t.clone(),
        DataType::UInt8 | DataType::UInt16 | DataType::UInt32 => DataType::UInt64,
        DataType::Float16 | DataType::Float32 | DataType::Float64 => DataType::Float64,
        DataType::Date32 | DataType::Date64 | DataType::Timestamp(..) => temporal_arg(t)?,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => DataType::Utf8,
        other => return plan_err!("CAST of {other} to an integer"),
    })
}

/// A date argument as microseconds since the epoch per row (`None`: NULL or not a date).
fn datetimes(a: &ArrayRef) -> DfResult<Vec<Option<i64>>> {
    Ok(match a.data_type() {
        DataType::Null => vec![None; a.len()],
        DataType::Date32 => a
            .as_primitive::<Date32Type>()
            .iter()
            .map(|d| d.map(|d| i64::from(d) * MICROS_PER_DAY))
            .collect(),
        DataType::Timestamp(TimeUnit::Microsecond, _) => a
            .as_primitive::<TimestampMicrosecondType>()
            .iter()
            .collect(),
        DataType::Utf8 => a
            .as_string::<i32>()
            .iter()
            .map(|s| s.and_then(date_text::parse_datetime))
            .collect(),
        other => return exec_err!("unexpected date argument type {other}"),
    })
}

fn strings(a: &ArrayRef) -> DfResult<&StringArray> {
    a.as_any()
        .downcast_ref::<StringArray>()
        .ok_or_else(|| DataFusionError::Internal("expected a string argument".into()))
}

fn string_at(a: &StringArray, i: usize) -> Option<&str> {
    (!a.is_null(i)).then(|| a.value(i))
}

fn days(micros: i64) -> i32 {
    i32::try_from(micros.div_euclid(MICROS_PER_DAY)).unwrap_or(i32::MAX)
}

fn out_of_range(what: String) -> DataFusionError {
    DataFusionError::External(Box::new(crate::error::SqlError::ValueOutOfRange(what)))
}

fn unsupported(what: String) -> DataFusionError {
    DataFusionError::External(Box::new(crate::error::SqlError::unsupported(what)))
}

/// A TIMESTAMPDIFF unit: microseconds per unit, or months per unit (negative).
fn unit_step(unit: &str) -> Option<i64> {
    let unit = unit.trim_start_matches("SQL_TSI_");
    Some(match unit {
        "MICROSECOND" => 1,
        "SECOND" => 1_000_000,
        "MINUTE" => 60_000_000,
        "HOUR" => 3_600_000_000,
        "DAY" => MICROS_PER_DAY,
        "WEEK" => 7 * MICROS_PER_DAY,
        "MONTH" => -1,
        "QUARTER" => -3,
        "YEAR" => -12,
        _ => return None,
    })
}

/// True if `unit` is a TIMESTAMPDIFF unit (upper case).
#[must_use]
pub fn is_timestampdiff_unit(unit: &str) -> bool {
    unit_step(unit).is_some()
}

/// `TIMESTAMPDIFF(unit, a, b)`: whole units from `a` to `b`, truncated toward zero; months
/// count only when `b`'s day and time reach `a`'s (MySQL's rule).
fn timestampdiff(step: i64, a: i64, b: i64) -> Option<i64> {
    if step > 0 {
        return b.checked_sub(a).map(|d| d / step);
    }
    let (neg, lo, hi) = if a > b { (-1, b, a) } else { (1, a, b) };
    let (x, y) = (Parts::of(lo), Parts::of(hi));
    let mut months = (y.year - x.year) * 12 + i64::from(y.month) - i64::from(x.month);
    let rest = |p: &Parts| (p.day, p.hour, p.minute, p.second, p.micro);
    if rest(&y) < rest(&x) {
        months -= 1;
    }
    Some(neg * (months / -step))
}

/// MySQL string → integer: optional sign and leading digits (other text ends the number).
fn leading_integer(s: &str) -> Option<i128> {
    let t = s.trim_start();
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, t.get(1..)?),
        Some(b'+') => (false, t.get(1..)?),
        _ => (false, t),
    };
    let n = t.bytes().take_while(u8::is_ascii_digit).count();
    let v: i128 = if n == 0 { 0 } else { t.get(..n)?.parse().ok()? };
    Some(if neg { -v } else { v })
}

/// YYYYMMDD or YYYYMMDDHHMMSS of a date value, as MySQL casts it to an integer.
fn date_number(micros: i64, with_time: bool) -> i128 {
    let p = Parts::of(micros);
    let date = i128::from(p.year) * 10_000 + i128::from(p.month * 100 + p.day);
    if with_time {
        date * 1_000_000 + i128::from(p.hour * 10_000 + p.minute * 100 + p.second)
    } else {
        date
    }
}

fn round_half_away(v: i128, scale: i8) -> Option<i128> {
    if scale <= 0 {
        return v.checked_mul(10i128.checked_pow(u32::from(scale.unsigned_abs()))?);
    }
    let d = 10i128.checked_pow(u32::from(scale.unsigned_abs()))?;
    let (q, r) = (v / d, v % d);
    Some(if r.abs() * 2 >= d { q + v.signum() } else { q })
}

impl DateFunction {
    /// CAST(x AS SIGNED | UNSIGNED): the value as an integer before the range check.
    fn integers(&self, a: &ArrayRef) -> DfResult<Vec<Option<i128>>> {
        let f64_to_int = |f: f64| -> DfResult<i128> {
            let r = f.round();
            if !r.is_finite() || r.abs() > 1.9e19 {
                return Err(out_of_range(format!("CAST of {f} to an integer")));
            }
            Ok(r as i128)
        };
        Ok(match a.data_type() {
            DataType::Null => vec![None; a.len()],
            DataType::Int64 => a
                .as_primitive::<Int64Type>()
                .iter()
                .map(|v| v.map(i128::from))
                .collect(),
            DataType::UInt64 => a
                .as_primitive::<UInt64Type>()
                .iter()
                .map(|v| v.map(i128::from))
                .collect(),
            DataType::Decimal128(_, scale) => a
                .as_primitive::<Decimal128Type>()
                .iter()
                .map(|v| v.and_then(|v| round_half_away(v, *scale)))
                .collect(),
            DataType::Float64 => a
                .as_primitive::<Float64Type>()
                .iter()
                .map(|v| v.map(f64_to_int).transpose())
                .collect::<DfResult<_>>()?,
            DataType::Utf8 => strings(a)?
                .iter()
                .map(|s| s.map(|s| leading_integer(s).unwrap_or(0)))
                .collect(),
            DataType::Date32 => datetimes(a)?
                .into_iter()
                .map(|v| v.map(|m| date_number(m, false)))
                .collect(),
            DataType::Timestamp(..) => datetimes(a)?
                .into_iter()
                .map(|v| v.map(|m| date_number(m, true)))
                .collect(),
            other => return exec_err!("{} of {other}", self.name),
        })
    }

    fn cast_integer(&self, a: &ArrayRef) -> DfResult<ArrayRef> {
        let values = self.integers(a)?;
        let signed = matches!(a.data_type(), DataType::Int64 | DataType::Utf8);
        let range = |v: i128| out_of_range(format!("{v} in CAST to an integer"));
        if self.kind == Kind::CastSigned {
            // Values above BIGINT's range but within BIGINT UNSIGNED's wrap, as in MySQL.
            let out = values
                .into_iter()
                .map(|v| {
                    v.map(|v| match i64::try_from(v) {
                        Ok(x) => Ok(x),
                        Err(_) => u64::try_from(v).map(|u| u as i64).map_err(|_| range(v)),
                    })
                    .transpose()
                })
                .collect::<DfResult<Int64Array>>()?;
            return Ok(Arc::new(out));
        }
        // A negative integer wraps to BIGINT UNSIGNED as in MySQL; other negatives are refused.
        let out = values
            .into_iter()
            .map(|v| {
                v.map(|v| match u64::try_from(v) {
                    Ok(u) => Ok(u),
                    Err(_) if signed && v >= i128::from(i64::MIN) && v < 0 => Ok(v as i64 as u64),
                    Err(_) => Err(range(v)),
                })
                .transpose()
            })
            .collect::<DfResult<UInt64Array>>()?;
        Ok(Arc::new(out))
    }

    fn eval(&self, arrays: &[ArrayRef], rows: usize) -> DfResult<ArrayRef> {
        let arg = |i: usize| {
            arrays.get(i).ok_or_else(|| {
                DataFusionError::Internal(format!("{}: missing argument", self.name))
            })
        };
        let dates = || datetimes(arg(0)?);
        let ints = |f: &dyn Fn(&Parts) -> i64| -> DfResult<ArrayRef> {
            let out: Int64Array = dates()?
                .into_iter()
                .map(|v| v.map(|m| f(&Parts::of(m))))
                .collect();
            Ok(Arc::new(out))
        };
        Ok(match self.kind {
            Kind::Date => {
                let out: Date32Array = dates()?.into_iter().map(|v| v.map(days)).collect();
                Arc::new(out)
            }
            Kind::DateTime => {
                let scale = arg(1)?.as_primitive::<Int64Type>();
                let vals = dates()?;
                let mut out = Vec::with_capacity(rows);
                for (i, v) in vals.into_iter().enumerate() {
                    let digits = u32::try_from(scale.value(i).clamp(0, 6)).unwrap_or(0);
                    let unit = 10i64.pow(6 - digits);
                    // Fractional seconds beyond the precision round half up, as in MySQL.
                    out.push(v.map(|m| (m + unit / 2).div_euclid(unit) * unit));
                }
                Arc::new(TimestampMicrosecondArray::from(out))
            }
            Kind::DateDiff => {
                let (a, b) = (dates()?, datetimes(arg(1)?)?);
                let out: Int64Array = a
                    .into_iter()
                    .zip(b)
                    .map(|(x, y)| Some(i64::from(days(x?)) - i64::from(days(y?))))
                    .collect();
                Arc::new(out)
            }
            Kind::DayOfWeek => ints(&|p| i64::from((p.weekday() + 1) % 7 + 1))?,
            Kind::Weekday => ints(&|p| i64::from(p.weekday()))?,
            Kind::DayOfMonth => ints(&|p| i64::from(p.day))?,
            Kind::DayOfYear => ints(&Parts::day_of_year)?,
            Kind::LastDay => {
                let out: Date32Array = dates()?
                    .into_iter()
                    .map(|v| {
                        v.map(|m| {
                            let p = Parts::of(m);
                            let last = date_text::days_in_month(p.year, p.month);
                            days(date_text::days_from_civil(p.year, p.month, last) * MICROS_PER_DAY)
                        })
                    })
                    .collect();
                Arc::new(out)
            }
            Kind::DateFormat => {
                let (vals, fmt) = (dates()?, strings(arg(1)?)?);
                let mut out = Vec::with_capacity(rows);
                for (i, v) in vals.into_iter().enumerate() {
                    out.push(match (v, string_at(fmt, i)) {
                        (Some(m), Some(f)) => {
                            Some(date_text::date_format(m, f).map_err(unsupported)?)
                        }
                        _ => None,
                    });
                }
                Arc::new(StringArray::from(out))
            }
            Kind::TimestampDiff => {
                let unit = strings(arg(0)?)?;
                let (a, b) = (datetimes(arg(1)?)?, datetimes(arg(2)?)?);
                let mut out = Vec::with_capacity(rows);
                for (i, (x, y)) in a.into_iter().zip(b).enumerate() {
                    let u = string_at(unit, i).unwrap_or("");
                    let Some(step) = unit_step(u) else {
                        return Err(unsupported(format!("TIMESTAMPDIFF unit {u}")));
                    };
                    out.push(x.zip(y).and_then(|(x, y)| timestampdiff(step, x, y)));
                }
                Arc::new(Int64Array::from(out))
            }
            Kind::StrToDate | Kind::StrToDateTime => {
                let (text, fmt) = (strings(arg(0)?)?, strings(arg(1)?)?);
                let mut out = Vec::with_capacity(rows);
                for i in 0..rows {
                    out.push(match (string_at(text, i), string_at(fmt, i)) {
                        (Some(t), Some(f)) => date_text::str_to_date(t, f).map_err(unsupported)?,
                        _ => None,
                    });
                }
                if self.kind == Kind::StrToDate {
                    let out: Date32Array = out.into_iter().map(|v| v.map(days)).collect();
                    Arc::new(out)
                } else {
                    Arc::new(TimestampMicrosecondArray::from(out))
                }
            }
            Kind::CastSigned | Kind::CastUnsigned => self.cast_integer(arg(0)?)?,
        })
    }
}

impl ScalarUDFImpl for DateFunction {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, args: &[DataType]) -> DfResult<Vec<DataType>> {
        let arity = match self.kind {
            Kind::DateTime | Kind::DateDiff | Kind::DateFormat => 2,
            Kind::StrToDate | Kind::StrToDateTime => 2,
            Kind::TimestampDiff => 3,
            _ => 1,
        };
        if args.len() != arity {
            return plan_err!(
                "Incorrect parameter count in the call to native function '{}'",
                self.name.trim_start_matches("mysql_")
            );
        }
        match (self.kind, args) {
            (Kind::CastSigned | Kind::CastUnsigned, [a]) => Ok(vec![numeric_arg(a)?]),
            (Kind::DateTime, [a, _]) => Ok(vec![temporal_arg(a)?, DataType::Int64]),
            (Kind::DateFormat, [a, _]) => Ok(vec![temporal_arg(a)?, DataType::Utf8]),
            (Kind::StrToDate | Kind::StrToDateTime, _) => Ok(vec![DataType::Utf8; 2]),
            (Kind::TimestampDiff, [_, a, b]) => {
                Ok(vec![DataType::Utf8, temporal_arg(a)?, temporal_arg(b)?])
            }
            _ => args.iter().map(temporal_arg).collect(),
        }
    }

    fn return_type(&self, _args: &[DataType]) -> DfResult<DataType> {
        Ok(match self.kind {
            Kind::Date | Kind::LastDay | Kind::StrToDate => DataType::Date32,
            Kind::DateTime | Kind::StrToDateTime => {
                DataType::Timestamp(TimeUnit::Microsecond, None)
            }
            Kind::DateFormat => DataType::Utf8,
            Kind::CastUnsigned => DataType::UInt64,
            _ => DataType::Int64,
        })
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let rows = args.number_rows;
        let arrays: Vec<ArrayRef> = args
            .args
            .iter()
            .map(|a| a.clone().into_array(rows))
            .collect::<DfResult<_>>()?;
        Ok(ColumnarValue::Array(self.eval(&arrays, rows)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use date_text::parse_datetime as at;

    #[test]
    fn timestampdiff_counts_whole_units() {
        let (a, b) = (at("2026-01-01").unwrap(), at("2026-01-31").unwrap());
        assert_eq!(timestampdiff(MICROS_PER_DAY, a, b), Some(30));
        assert_eq!(timestampdiff(MICROS_PER_DAY, b, a), Some(-30));
        let (a, b) = (at("2026-01-31").unwrap(), at("2026-02-28").unwrap());
        assert_eq!(timestampdiff(-1, a, b), Some(0));
        assert_eq!(
            timestampdiff(-1, at("2026-01-31").unwrap(), at("2026-03-31").unwrap()),
            Some(2)
        );
        assert_eq!(
            timestampdiff(-12, at("2020-02-29").unwrap(), at("2026-02-28").unwrap()),
            Some(5)
        );
        assert_eq!(
            timestampdiff(-12, at("2026-02-28").unwrap(), at("2020-02-29").unwrap()),
            Some(-5)
        );
    }

    #[test]
    fn integer_casts_follow_mysql() {
        assert_eq!(round_half_away(15, 1), Some(2));
        assert_eq!(round_half_away(-15, 1), Some(-2));
        assert_eq!(round_half_away(14, 1), Some(1));
        assert_eq!(leading_integer(" 12abc"), Some(12));
        assert_eq!(leading_integer("1.5"), Some(1));
        assert_eq!(leading_integer("-7"), Some(-7));
        assert_eq!(leading_integer("abc"), Some(0));
        assert_eq!(
            date_number(at("2026-01-02 03:04:05").unwrap(), true),
            20_260_102_030_405
        );
    }
}
