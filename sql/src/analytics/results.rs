//! Arrow results back to the engine's [`StatementResult`]: MySQL column metadata per output
//! field and one [`Datum`] per cell.
//!
//! Invariants: a field that carries the provider's metadata (a plain column reference) reports
//! the column's declared type, name, table and database; other fields get the SQL type their
//! Arrow type maps to (DECIMAL keeps precision and scale, booleans are BIGINT 0/1 as MySQL's
//! comparison results are). An Arrow type with no MySQL counterpart is an error, never a guess.

use super::provider::{META_DB, META_NAME, META_TABLE, META_TYPE, arrow_type};
use crate::error::{SqlError, SqlResult};
use crate::result::{OutputColumn, StatementResult};
use crate::types::{Datum, SqlType};
use datafusion::arrow::array::{
    Array, AsArray, BinaryArray, BooleanArray, Date32Array, Date64Array, Decimal128Array,
    Float32Array, Float64Array, Int8Array, Int16Array, Int32Array, Int64Array, LargeBinaryArray,
    LargeStringArray, StringArray, StringViewArray, TimestampMicrosecondArray,
    TimestampMillisecondArray, TimestampNanosecondArray, TimestampSecondArray, UInt8Array,
    UInt16Array, UInt32Array, UInt64Array,
};
use datafusion::arrow::datatypes::{DataType, Field, TimeUnit};
use datafusion::arrow::record_batch::RecordBatch;

/// The SQL type reported for an Arrow type.
fn sql_type_of(dt: &DataType) -> SqlResult<SqlType> {
    Ok(match dt {
        DataType::Int8 => SqlType::TinyInt { unsigned: false },
        DataType::Int16 => SqlType::SmallInt { unsigned: false },
        DataType::Int32 => SqlType::Int { unsigned: false },
        DataType::Int64 | DataType::Boolean | DataType::Null => SqlType::BigInt { unsigned: false },
        DataType::UInt8 => SqlType::TinyInt { unsigned: true },
        DataType::UInt16 => SqlType::SmallInt { unsigned: true },
        DataType::UInt32 => SqlType::Int { unsigned: true },
        DataType::UInt64 => SqlType::BigInt { unsigned: true },
        DataType::Float32 | DataType::Float64 => SqlType::Double,
        DataType::Decimal128(p, s) => SqlType::Decimal {
            precision: *p,
            scale: u8::try_from(*s)
                .map_err(|_| SqlError::unsupported(format!("result type {dt}")))?,
        },
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => SqlType::Varchar { len: 255 },
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => SqlType::Blob,
        DataType::Date32 | DataType::Date64 => SqlType::Date,
        DataType::Timestamp(_, _) => SqlType::DateTime,
        other => return Err(SqlError::unsupported(format!("result type {other}"))),
    })
}

/// Column metadata of one output field.
pub fn output_column(field: &Field) -> SqlResult<OutputColumn> {
    let meta = field.metadata();
    let declared: Option<SqlType> = meta
        .get(META_TYPE)
        .and_then(|t| serde_json::from_str(t).ok())
        .filter(|t| arrow_type(*t) == *field.data_type());
    let sql_type = match declared {
        Some(t) => t,
        None => sql_type_of(field.data_type())?,
    };
    let (org_name, table, db) = match (declared, meta.get(META_NAME)) {
        (Some(_), Some(n)) => (
            n.clone(),
            meta.get(META_TABLE).cloned().unwrap_or_default(),
            meta.get(META_DB).cloned().unwrap_or_default(),
        ),
        _ => (String::new(), String::new(), String::new()),
    };
    // `SELECT *` yields lower-cased field names; show the declared spelling instead.
    let name = if !org_name.is_empty() && org_name.to_lowercase() == *field.name() {
        org_name.clone()
    } else {
        field.name().clone()
    };
    Ok(OutputColumn {
        name,
        org_name,
        table,
        db,
        sql_type,
        nullable: field.is_nullable(),
    })
}

fn downcast<T: 'static>(a: &dyn Array) -> SqlResult<&T> {
    a.as_any()
        .downcast_ref::<T>()
        .ok_or_else(|| SqlError::Internal(format!("unexpected array for {}", a.data_type())))
}

fn utf8(b: &str) -> Datum {
    Datum::Bytes(b.as_bytes().to_vec())
}

/// Appends the datums of column `col` of `batch` to `rows` (one row per batch row).
fn push_column(a: &dyn Array, rows: &mut [Vec<Datum>]) -> SqlResult<()> {
    macro_rules! each {
        ($ty:ty, $f:expr) => {{
            let arr = downcast::<$ty>(a)?;
            for (i, row) in rows.iter_mut().enumerate() {
                row.push(if arr.is_null(i) {
                    Datum::Null
                } else {
                    #[allow(clippy::redundant_closure_call)]
                    $f(arr.value(i))
                });
            }
        }};
    }
    match a.data_type() {
        DataType::Null => rows.iter_mut().for_each(|r| r.push(Datum::Null)),
        DataType::Boolean => each!(BooleanArray, |v: bool| Datum::Int(i64::from(v))),
        DataType::Int8 => each!(Int8Array, |v: i8| Datum::Int(i64::from(v))),
        DataType::Int16 => each!(Int16Array, |v: i16| Datum::Int(i64::from(v))),
        DataType::Int32 => each!(Int32Array, |v: i32| Datum::Int(i64::from(v))),
        DataType::Int64 => each!(Int64Array, Datum::Int),
        DataType::UInt8 => each!(UInt8Array, |v: u8| Datum::Int(i64::from(v))),
        DataType::UInt16 => each!(UInt16Array, |v: u16| Datum::Int(i64::from(v))),
        DataType::UInt32 => each!(UInt32Array, |v: u32| Datum::Int(i64::from(v))),
        DataType::UInt64 => each!(UInt64Array, |v: u64| i64::try_from(v)
            .map_or(Datum::UInt(v), Datum::Int)),
        DataType::Float32 => each!(Float32Array, |v: f32| Datum::Double(f64::from(v))),
        DataType::Float64 => each!(Float64Array, Datum::Double),
        DataType::Decimal128(_, s) => {
            let scale = u8::try_from(*s)
                .map_err(|_| SqlError::unsupported(format!("result type {}", a.data_type())))?;
            each!(Decimal128Array, |v: i128| Datum::Decimal {
                unscaled: v,
                scale
            })
        }
        DataType::Utf8 => each!(StringArray, utf8),
        DataType::LargeUtf8 => each!(LargeStringArray, utf8),
        DataType::Utf8View => each!(StringViewArray, utf8),
        DataType::Binary => each!(BinaryArray, |v: &[u8]| Datum::Bytes(v.to_vec())),
        DataType::LargeBinary => each!(LargeBinaryArray, |v: &[u8]| Datum::Bytes(v.to_vec())),
        DataType::BinaryView => {
            let arr = a.as_binary_view();
            for (i, row) in rows.iter_mut().enumerate() {
                row.push(if arr.is_null(i) {
                    Datum::Null
                } else {
                    Datum::Bytes(arr.value(i).to_vec())
                });
            }
        }
        DataType::Date32 => each!(Date32Array, Datum::Date),
        DataType::Date64 => each!(Date64Array, |v: i64| Datum::Date(
            i32::try_from(v.div_euclid(86_400_000)).unwrap_or(i32::MAX)
        )),
        DataType::Timestamp(unit, _) => match unit {
            TimeUnit::Second => each!(TimestampSecondArray, |v: i64| Datum::DateTime(
                v.saturating_mul(1_000_000)
            )),
            TimeUnit::Millisecond => each!(TimestampMillisecondArray, |v: i64| {
                Datum::DateTime(v.saturating_mul(1_000))
            }),
            TimeUnit::Microsecond => each!(TimestampMicrosecondArray, Datum::DateTime),
            TimeUnit::Nanosecond => each!(TimestampNanosecondArray, |v: i64| Datum::DateTime(
                v.div_euclid(1_000)
            )),
        },
        other => return Err(SqlError::unsupported(format!("result type {other}"))),
    }
    Ok(())
}

/// Converts collected batches into a result set with `fields` as its columns.
pub fn to_statement_result(
    fields: &[Field],
    batches: &[RecordBatch],
) -> SqlResult<StatementResult> {
    let columns = fields
        .iter()
        .map(output_column)
        .collect::<SqlResult<Vec<_>>>()?;
    let total: usize = batches.iter().map(RecordBatch::num_rows).sum();
    let mut rows: Vec<Vec<Datum>> = Vec::with_capacity(total);
    for batch in batches {
        let mut part: Vec<Vec<Datum>> = (0..batch.num_rows())
            .map(|_| Vec::with_capacity(columns.len()))
            .collect();
        for col in batch.columns() {
            push_column(col.as_ref(), &mut part)?;
        }
        rows.append(&mut part);
    }
    Ok(StatementResult::Rows { columns, rows })
}
