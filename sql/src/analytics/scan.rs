//! [`StorageScan`]: the partition stream behind a [`super::provider::StorageTable`] scan. It
//! walks one primary-key range of a table in key order and yields Arrow record batches of at
//! most `batch_size` rows, decoding only the projected columns (`sql/FORMAT.md` row encoding).
//!
//! Invariants: batches are produced lazily, one at a time, so a scan holds at most one batch of
//! decoded rows; the key range never leaves the table's `'r' · table id` prefix.

use super::provider::RowReader;
use crate::catalog::Table;
use crate::codec::row::RawValue;
use crate::codec::{key, row};
use crate::types::SqlType;
use datafusion::arrow::array::{
    ArrayRef, BinaryBuilder, Date32Builder, Decimal128Builder, Float64Builder, Int8Builder,
    Int16Builder, Int32Builder, Int64Builder, StringBuilder, TimestampMicrosecondBuilder,
    UInt8Builder, UInt16Builder, UInt32Builder, UInt64Builder,
};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::{RecordBatch, RecordBatchOptions};
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::PartitionStream;
use orcinus_storage::{Keyspace, ScanIter};
use std::fmt;
use std::ops::Bound;
use std::sync::Arc;

/// A half-open key range `[lower, upper)` inside one table's rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRange {
    pub lower: Vec<u8>,
    /// `None` = up to the end of the table's prefix.
    pub upper: Option<Vec<u8>>,
    table_end: Option<Vec<u8>>,
}

impl KeyRange {
    /// All rows of `table_id`.
    #[must_use]
    pub fn table(table_id: u32) -> Self {
        let lower = key::row_prefix(table_id);
        let table_end = orcinus_storage::prefix_upper_bound(&lower);
        Self {
            lower,
            upper: None,
            table_end,
        }
    }

    /// The intersection of two ranges of the same table.
    #[must_use]
    pub fn intersect(self, other: Self) -> Self {
        let upper = match (self.upper, other.upper) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        Self {
            lower: self.lower.max(other.lower),
            upper,
            table_end: self.table_end,
        }
    }

    /// The same table's range `[lower, upper)`.
    #[must_use]
    pub fn with_bounds(&self, lower: Vec<u8>, upper: Option<Vec<u8>>) -> Self {
        Self {
            lower,
            upper,
            table_end: self.table_end.clone(),
        }
    }

    /// True if `key` lies in the range.
    #[must_use]
    pub fn contains(&self, key: &[u8]) -> bool {
        key >= self.lower.as_slice()
            && match self.upper_bound() {
                Bound::Excluded(u) => key < u,
                Bound::Included(u) => key <= u,
                Bound::Unbounded => true,
            }
    }

    /// The bounds to scan.
    #[must_use]
    pub fn bounds(&self) -> (Bound<&[u8]>, Bound<&[u8]>) {
        (Bound::Included(self.lower.as_slice()), self.upper_bound())
    }

    /// True if the range is the whole table.
    #[must_use]
    pub fn is_full(&self) -> bool {
        self.upper.is_none() && Some(self.lower.as_slice()) == key_prefix(&self.lower)
    }

    fn upper_bound(&self) -> Bound<&[u8]> {
        match (&self.upper, &self.table_end) {
            (Some(u), Some(e)) => Bound::Excluded(u.min(e).as_slice()),
            (Some(u), None) | (None, Some(u)) => Bound::Excluded(u.as_slice()),
            (None, None) => Bound::Unbounded,
        }
    }
}

fn key_prefix(k: &[u8]) -> Option<&[u8]> {
    k.get(..crate::rowio::PREFIX_LEN)
}

/// One partition of a table scan.
pub struct StorageScan {
    pub table: Arc<Table>,
    /// The projected schema (fields in `columns` order).
    pub schema: SchemaRef,
    /// Table column positions to produce, in output order.
    pub columns: Vec<usize>,
    pub reader: Arc<dyn RowReader>,
    pub data: Keyspace,
    pub range: KeyRange,
    pub batch_size: usize,
}

impl fmt::Debug for StorageScan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "StorageScan({}.{}, columns={:?}, pk_range={})",
            self.table.def.db,
            self.table.def.name,
            self.columns,
            if self.range.is_full() {
                "full"
            } else {
                "bounded"
            }
        )
    }
}

impl PartitionStream for StorageScan {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let (lower, upper) = self.range.bounds();
        let iter = self.reader.scan(&self.data, lower, upper);
        // Decode ascending column positions, then place them in output order.
        let mut wanted = self.columns.clone();
        wanted.sort_unstable();
        wanted.dedup();
        let order: Vec<usize> = self
            .columns
            .iter()
            .filter_map(|c| wanted.binary_search(c).ok())
            .collect();
        let batches = BatchIter {
            iter,
            table: self.table.clone(),
            schema: self.schema.clone(),
            wanted,
            order,
            batch_size: self.batch_size,
            done: false,
        };
        Box::pin(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            futures::stream::iter(batches),
        ))
    }
}

/// One partition of a scan served from the column cache: record batches sliced from cached
/// arrays (no storage read, no decoding).
pub struct CachedPartition {
    pub schema: SchemaRef,
    pub batches: Vec<RecordBatch>,
    /// `db.table` and the chunks served out of the table's chunks, for EXPLAIN.
    pub label: String,
}

impl fmt::Debug for CachedPartition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "CachedScan({}, batches={})",
            self.label,
            self.batches.len()
        )
    }
}

impl PartitionStream for CachedPartition {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let batches: Vec<DfResult<RecordBatch>> = self.batches.iter().cloned().map(Ok).collect();
        Box::pin(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            futures::stream::iter(batches),
        ))
    }
}

struct BatchIter {
    iter: ScanIter,
    table: Arc<Table>,
    schema: SchemaRef,
    wanted: Vec<usize>,
    order: Vec<usize>,
    batch_size: usize,
    done: bool,
}

impl Iterator for BatchIter {
    type Item = DfResult<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.next_batch() {
            Ok(Some(b)) => Some(Ok(b)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

fn ext(e: crate::SqlError) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

impl BatchIter {
    fn next_batch(&mut self) -> DfResult<Option<RecordBatch>> {
        let Some(chunk) = decode_chunk(
            &mut self.iter,
            &self.table,
            &self.wanted,
            self.batch_size,
            false,
        )?
        else {
            return Ok(None);
        };
        let arrays = self
            .order
            .iter()
            .map(|&i| {
                chunk.columns.get(i).cloned().ok_or_else(|| {
                    ext(crate::SqlError::Internal(
                        "projected column was not decoded".into(),
                    ))
                })
            })
            .collect::<DfResult<Vec<ArrayRef>>>()?;
        let options = RecordBatchOptions::new().with_row_count(Some(chunk.rows));
        Ok(Some(RecordBatch::try_new_with_options(
            self.schema.clone(),
            arrays,
            &options,
        )?))
    }
}

/// Up to `batch_size` decoded rows: one array per wanted column, and (when asked for) the
/// first and last row keys.
pub struct DecodedChunk {
    pub rows: usize,
    pub columns: Vec<ArrayRef>,
    pub first_key: Vec<u8>,
    pub last_key: Vec<u8>,
}

/// Decodes the next up to `batch_size` rows of `iter` into one array per column of `wanted`
/// (ascending table column positions); `None` when the iterator is exhausted. With
/// `keep_keys` the chunk records its first and last row keys.
pub fn decode_chunk(
    iter: &mut ScanIter,
    table: &Table,
    wanted: &[usize],
    batch_size: usize,
    keep_keys: bool,
) -> DfResult<Option<DecodedChunk>> {
    let types = &table.types;
    let mut builders = wanted
        .iter()
        .map(|&c| {
            let ty = types.get(c).copied().ok_or_else(|| {
                ext(crate::SqlError::Internal(format!(
                    "column {c} beyond the width of {}",
                    table.def.name
                )))
            })?;
            Ok(ColumnBuilder::new(ty, batch_size.min(1 << 16)))
        })
        .collect::<DfResult<Vec<ColumnBuilder>>>()?;
    let mut rows = 0usize;
    let (mut first_key, mut last_key) = (Vec::new(), Vec::new());
    while rows < batch_size {
        let Some(item) = iter.next() else { break };
        let (k, v) = item.map_err(|e| ext(e.into()))?;
        row::visit_columns(&v, types, wanted, |slot, value| {
            match builders.get_mut(slot) {
                Some(b) => b.push(value),
                None => Err(crate::SqlError::Internal(
                    "decoded column without a builder".into(),
                )),
            }
        })
        .map_err(ext)?;
        if keep_keys {
            if rows == 0 {
                first_key = k.to_vec();
            }
            last_key.clear();
            last_key.extend_from_slice(&k);
        }
        rows += 1;
    }
    if rows == 0 {
        return Ok(None);
    }
    Ok(Some(DecodedChunk {
        rows,
        columns: builders.into_iter().map(ColumnBuilder::finish).collect(),
        first_key,
        last_key,
    }))
}

/// An Arrow builder for one column type.
enum ColumnBuilder {
    I8(Int8Builder),
    I16(Int16Builder),
    I32(Int32Builder),
    I64(Int64Builder),
    U8(UInt8Builder),
    U16(UInt16Builder),
    U32(UInt32Builder),
    U64(UInt64Builder),
    Dec(Decimal128Builder),
    F64(Float64Builder),
    Str(StringBuilder),
    Bin(BinaryBuilder),
    Date(Date32Builder),
    Ts(TimestampMicrosecondBuilder),
}

fn bad(v: RawValue<'_>, what: &str) -> crate::SqlError {
    crate::SqlError::Internal(format!("stored value {v:?} does not fit a {what} column"))
}

fn int_of<T: TryFrom<i128>>(v: RawValue<'_>, what: &str) -> crate::error::SqlResult<T> {
    match v {
        RawValue::Int(i) => T::try_from(i).map_err(|_| bad(v, what)),
        _ => Err(bad(v, what)),
    }
}

impl ColumnBuilder {
    fn new(ty: SqlType, cap: usize) -> Self {
        match ty {
            SqlType::TinyInt { unsigned: false } => Self::I8(Int8Builder::with_capacity(cap)),
            SqlType::SmallInt { unsigned: false } => Self::I16(Int16Builder::with_capacity(cap)),
            SqlType::Int { unsigned: false } => Self::I32(Int32Builder::with_capacity(cap)),
            SqlType::BigInt { unsigned: false } => Self::I64(Int64Builder::with_capacity(cap)),
            SqlType::TinyInt { unsigned: true } => Self::U8(UInt8Builder::with_capacity(cap)),
            SqlType::SmallInt { unsigned: true } => Self::U16(UInt16Builder::with_capacity(cap)),
            SqlType::Int { unsigned: true } => Self::U32(UInt32Builder::with_capacity(cap)),
            SqlType::BigInt { unsigned: true } => Self::U64(UInt64Builder::with_capacity(cap)),
            SqlType::Decimal { precision, scale } => {
                Self::Dec(Decimal128Builder::with_capacity(cap).with_data_type(
                    super::provider::arrow_type(SqlType::Decimal { precision, scale }),
                ))
            }
            SqlType::Double | SqlType::Float => Self::F64(Float64Builder::with_capacity(cap)),
            SqlType::Char { .. } | SqlType::Varchar { .. } | SqlType::Text => {
                Self::Str(StringBuilder::with_capacity(cap, cap * 16))
            }
            SqlType::Blob => Self::Bin(BinaryBuilder::with_capacity(cap, cap * 16)),
            SqlType::Date => Self::Date(Date32Builder::with_capacity(cap)),
            SqlType::DateTime | SqlType::Timestamp => {
                Self::Ts(TimestampMicrosecondBuilder::with_capacity(cap))
            }
        }
    }

    /// Appends one stored value (decimals are stored at the column's scale, the builder's).
    fn push(&mut self, v: RawValue<'_>) -> crate::error::SqlResult<()> {
        if v == RawValue::Null {
            match self {
                Self::I8(b) => b.append_null(),
                Self::I16(b) => b.append_null(),
                Self::I32(b) => b.append_null(),
                Self::I64(b) => b.append_null(),
                Self::U8(b) => b.append_null(),
                Self::U16(b) => b.append_null(),
                Self::U32(b) => b.append_null(),
                Self::U64(b) => b.append_null(),
                Self::Dec(b) => b.append_null(),
                Self::F64(b) => b.append_null(),
                Self::Str(b) => b.append_null(),
                Self::Bin(b) => b.append_null(),
                Self::Date(b) => b.append_null(),
                Self::Ts(b) => b.append_null(),
            }
            return Ok(());
        }
        match self {
            Self::I8(b) => b.append_value(int_of(v, "TINYINT")?),
            Self::I16(b) => b.append_value(int_of(v, "SMALLINT")?),
            Self::I32(b) => b.append_value(int_of(v, "INT")?),
            Self::I64(b) => b.append_value(int_of(v, "BIGINT")?),
            Self::U8(b) => b.append_value(int_of(v, "TINYINT UNSIGNED")?),
            Self::U16(b) => b.append_value(int_of(v, "SMALLINT UNSIGNED")?),
            Self::U32(b) => b.append_value(int_of(v, "INT UNSIGNED")?),
            Self::U64(b) => b.append_value(int_of(v, "BIGINT UNSIGNED")?),
            Self::Dec(b) => match v {
                RawValue::Int(i) => b.append_value(i),
                _ => return Err(bad(v, "DECIMAL")),
            },
            Self::F64(b) => match v {
                RawValue::Double(d) => b.append_value(d),
                _ => return Err(bad(v, "DOUBLE")),
            },
            Self::Str(b) => match v {
                RawValue::Bytes(bytes) => {
                    b.append_value(std::str::from_utf8(bytes).map_err(|_| bad(v, "utf8mb4"))?)
                }
                _ => return Err(bad(v, "string")),
            },
            Self::Bin(b) => match v {
                RawValue::Bytes(bytes) => b.append_value(bytes),
                _ => return Err(bad(v, "BLOB")),
            },
            Self::Date(b) => b.append_value(int_of(v, "DATE")?),
            Self::Ts(b) => b.append_value(int_of(v, "DATETIME")?),
        }
        Ok(())
    }

    fn finish(self) -> ArrayRef {
        match self {
            Self::I8(mut b) => Arc::new(b.finish()),
            Self::I16(mut b) => Arc::new(b.finish()),
            Self::I32(mut b) => Arc::new(b.finish()),
            Self::I64(mut b) => Arc::new(b.finish()),
            Self::U8(mut b) => Arc::new(b.finish()),
            Self::U16(mut b) => Arc::new(b.finish()),
            Self::U32(mut b) => Arc::new(b.finish()),
            Self::U64(mut b) => Arc::new(b.finish()),
            Self::Dec(mut b) => Arc::new(b.finish()),
            Self::F64(mut b) => Arc::new(b.finish()),
            Self::Str(mut b) => Arc::new(b.finish()),
            Self::Bin(mut b) => Arc::new(b.finish()),
            Self::Date(mut b) => Arc::new(b.finish()),
            Self::Ts(mut b) => Arc::new(b.finish()),
        }
    }
}
