//! [`StorageTable`]: a DataFusion `TableProvider` over one user table, read through a
//! [`RowReader`] (a storage snapshot, or a transaction's snapshot plus its own writes).
//!
//! Invariants:
//! - The Arrow schema is derived from the catalog's column types ([`arrow_type`]); every field
//!   carries the column's `SqlType` (serde JSON), table and database in its metadata so result
//!   sets report MySQL column metadata for plain column references.
//! - Field names are the lower-cased column names: MySQL column names are case-insensitive and
//!   the planner lower-cases unquoted identifiers (quoted ones are lower-cased by the dialect).
//! - Filters on the leading primary-key column (`col op literal` with the literal of the
//!   column's exact type) narrow the key range scanned and are reported `Inexact`, so DataFusion
//!   still applies them; every other filter is `Unsupported`. Either way the answer is the same.

use super::column_cache::{BuildSource, CacheUse, CachedTable};
use super::partitions;
use super::scan::{CachedPartition, KeyRange, StorageScan};
use super::scan_exec::StorageScanExec;
use crate::catalog::Table;
use crate::codec::key;
use crate::types::{Datum, SqlType};
use async_trait::async_trait;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use datafusion::arrow::record_batch::{RecordBatch, RecordBatchOptions};
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::logical_expr::{
    BinaryExpr, Expr, Operator, TableProviderFilterPushDown, TableType,
};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::streaming::{PartitionStream, StreamingTableExec};
use orcinus_storage::{Keyspace, ScanIter, Snapshot, Transaction};
use std::collections::HashMap;
use std::fmt;
use std::ops::Bound;
use std::sync::Arc;

/// Field metadata key holding the column's `SqlType` as serde JSON.
pub const META_TYPE: &str = "orcinus.sql_type";
/// Field metadata key holding the column name as declared.
pub const META_NAME: &str = "orcinus.name";
/// Field metadata key holding the table name.
pub const META_TABLE: &str = "orcinus.table";
/// Field metadata key holding the database name.
pub const META_DB: &str = "orcinus.db";

/// What the analytical executor reads rows through.
pub trait RowReader: Send + Sync {
    /// Ascending scan of `ks` within the bounds.
    fn scan(&self, ks: &Keyspace, lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> ScanIter;

    /// Up to `limit` keys of `ks` within the bounds, ascending (descending if `reverse`): the
    /// scan planner reads them to split a scan and estimate its rows; they are not rows read.
    fn sample_keys(
        &self,
        ks: &Keyspace,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        limit: usize,
        reverse: bool,
    ) -> orcinus_storage::Result<Vec<Vec<u8>>>;
}

fn collect_keys(
    iter: impl Iterator<Item = orcinus_storage::Result<orcinus_storage::KvPair>>,
    limit: usize,
) -> orcinus_storage::Result<Vec<Vec<u8>>> {
    iter.take(limit)
        .map(|kv| kv.map(|(k, _)| k.to_vec()))
        .collect()
}

impl RowReader for Snapshot {
    fn scan(&self, ks: &Keyspace, lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> ScanIter {
        Box::new(self.range(ks, lower, upper))
    }

    fn sample_keys(
        &self,
        ks: &Keyspace,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        limit: usize,
        reverse: bool,
    ) -> orcinus_storage::Result<Vec<Vec<u8>>> {
        let keys = self.range(ks, lower, upper);
        if reverse {
            collect_keys(keys.rev(), limit)
        } else {
            collect_keys(keys, limit)
        }
    }
}

/// A transaction reads its snapshot overlaid with its own writes (REPEATABLE READ).
impl RowReader for Transaction {
    fn scan(&self, ks: &Keyspace, lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> ScanIter {
        Transaction::scan(self, ks, lower, upper, orcinus_storage::Direction::Forward)
    }

    fn sample_keys(
        &self,
        ks: &Keyspace,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        limit: usize,
        reverse: bool,
    ) -> orcinus_storage::Result<Vec<Vec<u8>>> {
        use orcinus_storage::Direction;
        let direction = if reverse {
            Direction::Reverse
        } else {
            Direction::Forward
        };
        collect_keys(Transaction::scan(self, ks, lower, upper, direction), limit)
    }
}

/// The Arrow type a column of `ty` is read as.
#[must_use]
pub fn arrow_type(ty: SqlType) -> DataType {
    match ty {
        SqlType::TinyInt { unsigned: false } => DataType::Int8,
        SqlType::SmallInt { unsigned: false } => DataType::Int16,
        SqlType::Int { unsigned: false } => DataType::Int32,
        SqlType::BigInt { unsigned: false } => DataType::Int64,
        SqlType::TinyInt { unsigned: true } => DataType::UInt8,
        SqlType::SmallInt { unsigned: true } => DataType::UInt16,
        SqlType::Int { unsigned: true } => DataType::UInt32,
        SqlType::BigInt { unsigned: true } => DataType::UInt64,
        SqlType::Decimal { precision, scale } => DataType::Decimal128(precision, scale as i8),
        SqlType::Double | SqlType::Float => DataType::Float64,
        SqlType::Char { .. } | SqlType::Varchar { .. } | SqlType::Text => DataType::Utf8,
        SqlType::Blob => DataType::Binary,
        SqlType::Date => DataType::Date32,
        SqlType::DateTime | SqlType::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, None),
    }
}

/// The Arrow schema of `table` (all columns, in table order).
#[must_use]
pub fn table_schema(table: &Table) -> SchemaRef {
    let def = &table.def;
    let fields: Vec<Field> = def
        .columns
        .iter()
        .map(|c| {
            let mut meta = HashMap::new();
            if let Ok(t) = serde_json::to_string(&c.ty) {
                meta.insert(META_TYPE.to_string(), t);
            }
            meta.insert(META_NAME.to_string(), c.name.clone());
            meta.insert(META_TABLE.to_string(), def.name.clone());
            meta.insert(META_DB.to_string(), def.db.clone());
            Field::new(c.name.to_lowercase(), arrow_type(c.ty), c.nullable).with_metadata(meta)
        })
        .collect();
    Arc::new(Schema::new(fields))
}

/// One user table as a DataFusion table.
pub struct StorageTable {
    table: Arc<Table>,
    schema: SchemaRef,
    reader: Arc<dyn RowReader>,
    data: Keyspace,
    batch_size: usize,
    /// The column cache and the table version this query's snapshot sees, when it may use it.
    cache: Option<CacheUse>,
}

impl fmt::Debug for StorageTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "StorageTable({}.{})",
            self.table.def.db, self.table.def.name
        )
    }
}

impl StorageTable {
    /// A provider for `table` reading through `reader` from keyspace `data`, and from the
    /// column cache when `cache` is given (the reader must see exactly `cache.version`).
    pub fn new(
        table: Arc<Table>,
        reader: Arc<dyn RowReader>,
        data: Keyspace,
        batch_size: usize,
        cache: Option<CacheUse>,
    ) -> Self {
        let schema = table_schema(&table);
        Self {
            table,
            schema,
            reader,
            data,
            batch_size: batch_size.max(1),
            cache,
        }
    }

    /// `range` split into up to `n` partitions of about equal key space (see [`partitions`]),
    /// each with its estimated row count (`None` = unknown).
    fn partition_ranges(
        &self,
        range: KeyRange,
        n: usize,
    ) -> DfResult<Vec<(KeyRange, Option<usize>)>> {
        let storage_err = |e: orcinus_storage::StorageError| {
            DataFusionError::External(Box::new(crate::SqlError::from(e)))
        };
        let sample = |r: &KeyRange, limit: usize, reverse: bool| {
            let (lower, upper) = r.bounds();
            self.reader
                .sample_keys(&self.data, lower, upper, limit, reverse)
                .map_err(storage_err)
        };
        let first = sample(&range, 1, false)?;
        let last = sample(&range, 1, true)?;
        let (Some(first), Some(last)) = (first.first(), last.first()) else {
            return Ok(vec![(range, Some(0))]);
        };
        let parts = if n > 1 {
            partitions::split(&range, first, last, n)
        } else {
            vec![range]
        };
        let mut planned = Vec::with_capacity(parts.len());
        for part in parts {
            let keys = sample(&part, partitions::SAMPLE_KEYS, false)?;
            let rows = partitions::estimate_rows(&part, first, last, &keys);
            planned.push((part, rows));
        }
        Ok(planned)
    }

    /// Position and type of the leading primary-key column (none for hidden row ids).
    fn leading_pk(&self) -> Option<(usize, SqlType)> {
        let pos = *self.table.def.primary_key.first()?;
        Some((pos, *self.table.types.get(pos)?))
    }

    /// The key-range contribution of one filter, if it constrains the leading PK column.
    fn filter_range(&self, e: &Expr) -> Option<KeyRange> {
        let (pos, ty) = self.leading_pk()?;
        let col_name = self.schema.fields().get(pos)?.name();
        match e {
            Expr::BinaryExpr(BinaryExpr { left, op, right }) => {
                if *op == Operator::And {
                    let l = self.filter_range(left);
                    let r = self.filter_range(right);
                    return match (l, r) {
                        (Some(a), Some(b)) => Some(a.intersect(b)),
                        (a, b) => a.or(b),
                    };
                }
                let (lit, op) = match (left.as_ref(), right.as_ref()) {
                    (Expr::Column(c), Expr::Literal(v, _)) if c.name == *col_name => (v, *op),
                    (Expr::Literal(v, _), Expr::Column(c)) if c.name == *col_name => {
                        (v, op.swap()?)
                    }
                    _ => return None,
                };
                let d = literal_datum(lit, ty)?;
                let mut enc = key::row_prefix(self.table.def.id);
                key::encode(&mut enc, &d, ty).ok()?;
                let after = orcinus_storage::prefix_upper_bound(&enc)?;
                let mut r = KeyRange::table(self.table.def.id);
                match op {
                    Operator::Eq => {
                        r.lower = enc;
                        r.upper = Some(after);
                    }
                    Operator::Lt => r.upper = Some(enc),
                    Operator::LtEq => r.upper = Some(after),
                    Operator::Gt => r.lower = after,
                    Operator::GtEq => r.lower = enc,
                    _ => return None,
                }
                Some(r)
            }
            Expr::Between(b) if !b.negated => {
                let col = Expr::Column(match b.expr.as_ref() {
                    Expr::Column(c) => c.clone(),
                    _ => return None,
                });
                let lo = Expr::BinaryExpr(BinaryExpr::new(
                    Box::new(col.clone()),
                    Operator::GtEq,
                    b.low.clone(),
                ));
                let hi = Expr::BinaryExpr(BinaryExpr::new(
                    Box::new(col),
                    Operator::LtEq,
                    b.high.clone(),
                ));
                Some(self.filter_range(&lo)?.intersect(self.filter_range(&hi)?))
            }
            _ => None,
        }
    }
}

impl StorageTable {
    /// A scan of the cached chunks of `entry` that overlap `range`, in up to `target`
    /// partitions of consecutive chunks.
    fn cached_scan(
        &self,
        entry: &CachedTable,
        range: &KeyRange,
        columns: &[usize],
        projected: SchemaRef,
        target: usize,
        limit: Option<usize>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let arrays = columns
            .iter()
            .map(|c| {
                entry.column(*c).cloned().ok_or_else(|| {
                    DataFusionError::Internal(format!("column {c} missing from the column cache"))
                })
            })
            .collect::<DfResult<Vec<_>>>()?;
        let mut batches = Vec::new();
        for (i, chunk) in entry.chunks().iter().enumerate() {
            if !chunk.overlaps(range) {
                continue;
            }
            let chunk_arrays = arrays
                .iter()
                .map(|a| {
                    a.get(i).cloned().ok_or_else(|| {
                        DataFusionError::Internal("column cache chunk count differs".into())
                    })
                })
                .collect::<DfResult<Vec<_>>>()?;
            let options = RecordBatchOptions::new().with_row_count(Some(chunk.rows));
            batches.push(RecordBatch::try_new_with_options(
                projected.clone(),
                chunk_arrays,
                &options,
            )?);
        }
        let n = if limit.is_some() { 1 } else { target.max(1) };
        let per = batches.len().div_ceil(n).max(1);
        let label = format!("{}.{}", self.table.def.db, self.table.def.name);
        let mut parts: Vec<Arc<dyn PartitionStream>> = Vec::new();
        let mut rows = Vec::new();
        let mut batches = batches.into_iter().peekable();
        while batches.peek().is_some() {
            let group: Vec<RecordBatch> = batches.by_ref().take(per).collect();
            let count: usize = group.iter().map(RecordBatch::num_rows).sum();
            rows.push(Some(limit.map_or(count, |l| count.min(l))));
            parts.push(Arc::new(CachedPartition {
                schema: projected.clone(),
                batches: group,
                label: label.clone(),
            }));
        }
        if parts.is_empty() {
            rows.push(Some(0));
            parts.push(Arc::new(CachedPartition {
                schema: projected.clone(),
                batches: Vec::new(),
                label,
            }));
        }
        let exec = StreamingTableExec::try_new(projected, parts, None, Vec::new(), false, limit)?;
        Ok(Arc::new(StorageScanExec::cached(exec, rows)))
    }
}

/// The datum of a literal when it has exactly the Arrow type the column is read as (so the
/// key encoding compares exactly as the filter does); `None` otherwise.
fn literal_datum(v: &ScalarValue, ty: SqlType) -> Option<Datum> {
    if v.data_type() != arrow_type(ty) || v.is_null() {
        return None;
    }
    Some(match v {
        ScalarValue::Int8(Some(x)) => Datum::Int(i64::from(*x)),
        ScalarValue::Int16(Some(x)) => Datum::Int(i64::from(*x)),
        ScalarValue::Int32(Some(x)) => Datum::Int(i64::from(*x)),
        ScalarValue::Int64(Some(x)) => Datum::Int(*x),
        ScalarValue::UInt8(Some(x)) => Datum::Int(i64::from(*x)),
        ScalarValue::UInt16(Some(x)) => Datum::Int(i64::from(*x)),
        ScalarValue::UInt32(Some(x)) => Datum::Int(i64::from(*x)),
        ScalarValue::UInt64(Some(x)) => Datum::UInt(*x),
        ScalarValue::Decimal128(Some(x), _, s) => Datum::Decimal {
            unscaled: *x,
            scale: u8::try_from(*s).ok()?,
        },
        ScalarValue::Date32(Some(x)) => Datum::Date(*x),
        ScalarValue::TimestampMicrosecond(Some(x), None) => Datum::DateTime(*x),
        // Strings compare under a case-insensitive collation; keys are binary.
        _ => return None,
    })
}

#[async_trait]
impl TableProvider for StorageTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> DfResult<Vec<TableProviderFilterPushDown>> {
        Ok(filters
            .iter()
            .map(|f| {
                if self.filter_range(f).is_some() {
                    TableProviderFilterPushDown::Inexact
                } else {
                    TableProviderFilterPushDown::Unsupported
                }
            })
            .collect())
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let mut range = KeyRange::table(self.table.def.id);
        for f in filters {
            if let Some(r) = self.filter_range(f) {
                range = range.intersect(r);
            }
        }
        let columns: Vec<usize> = match projection {
            Some(p) => p.clone(),
            None => (0..self.schema.fields().len()).collect(),
        };
        let projected = Arc::new(self.schema.project(&columns)?);
        let target = state.config_options().execution.target_partitions;
        if let Some(cache) = &self.cache {
            let may_build = range.is_full() && limit.is_none();
            let source = || {
                let partitions = self
                    .partition_ranges(KeyRange::table(self.table.def.id), target)?
                    .into_iter()
                    .map(|(r, _)| r)
                    .collect();
                Ok(BuildSource {
                    reader: self.reader.clone(),
                    data: self.data.clone(),
                    partitions,
                    batch_size: self.batch_size,
                })
            };
            let entry = cache
                .cache
                .get_or_build(&self.table, cache.version, &columns, may_build, source)
                .await?;
            if let Some(entry) = entry {
                cache.cache.note_hit();
                return self.cached_scan(&entry, &range, &columns, projected, target, limit);
            }
        }
        // A LIMIT without filters reads only the first rows: keep such a scan in one piece.
        let partitions = if limit.is_some() { 1 } else { target };
        let planned = self.partition_ranges(range, partitions)?;
        let rows: Vec<Option<usize>> = planned
            .iter()
            .map(|(_, r)| r.map(|r| limit.map_or(r, |l| r.min(l))))
            .collect();
        let parts: Vec<Arc<dyn PartitionStream>> = planned
            .into_iter()
            .map(|(range, _)| {
                Arc::new(StorageScan {
                    table: self.table.clone(),
                    schema: projected.clone(),
                    columns: columns.clone(),
                    reader: self.reader.clone(),
                    data: self.data.clone(),
                    range,
                    batch_size: self.batch_size,
                }) as Arc<dyn PartitionStream>
            })
            .collect();
        let exec = StreamingTableExec::try_new(projected, parts, None, Vec::new(), false, limit)?;
        let exec = StorageScanExec::new(exec, rows);
        Ok(Arc::new(exec))
    }
}
