//! Analytical SQL through DataFusion: the executor for the SELECT shapes the fast path does not
//! run (joins, subqueries, CTEs, set operations, window functions, large GROUP BY).
//!
//! Entry points: [`AnalyticsEngine::execute_for_session`] (catalog + the session's optional
//! open transaction) for the SQL engine; underneath it [`AnalyticsEngine::execute`] takes a parsed statement (MySQL dialect), the
//! catalog snapshot, the data keyspace and a [`RowReader`] — a storage `Snapshot`, or the
//! session's `Transaction` so a query inside a transaction sees its snapshot plus its own writes
//! ([`AnalyticsEngine::execute_in_transaction`] lends the transaction for the duration of the
//! query and hands it back). It returns the engine's [`StatementResult`] with MySQL column
//! metadata.
//!
//! Invariants:
//! - Every query runs in its own DataFusion session over one consistent read view, with a
//!   memory pool of [`AnalyticsConfig::memory_limit`] bytes and no spilling: exceeding it fails
//!   the query with 3170, it never swaps to disk or takes the server down.
//! - A table scan is split into up to [`AnalyticsConfig::target_partitions`] primary-key ranges
//!   ([`partitions`]) read in parallel; without ORDER BY, rows come back in no defined order.
//! - Scans outside a transaction may be served from the shared [`column_cache`] (decoded Arrow
//!   arrays per table and column, at most [`AnalyticsConfig::column_cache_bytes`]), but only
//!   when the query's storage snapshot sees exactly the table version the cached arrays were
//!   decoded from ([`crate::table_versions`]); queries inside a transaction read storage.
//! - MySQL semantics are applied by [`mysql_dialect`] only; DataFusion errors become `SqlError`
//!   in [`errors`] only.

pub mod catalog_provider;
pub mod column_cache;
pub mod errors;
pub mod mysql_dialect;
pub mod partitions;
pub mod provider;
pub mod results;
pub mod scan;
pub mod scan_exec;

/// The one column of an analytical EXPLAIN: a text cell holding the logical and physical plans
/// (also the result column COM_STMT_PREPARE reports for such an EXPLAIN).
#[must_use]
pub fn explain_column() -> OutputColumn {
    OutputColumn {
        name: "EXPLAIN".into(),
        org_name: String::new(),
        table: String::new(),
        db: String::new(),
        sql_type: crate::types::SqlType::Text,
        nullable: false,
    }
}

#[cfg(test)]
mod tests;
pub mod views;

use crate::catalog::{Catalog, CatalogSnapshot};
use crate::error::{SqlError, SqlResult};
use crate::result::{OutputColumn, StatementResult};
use crate::types::Datum;
use catalog_provider::{CATALOG_NAME, DatabaseCatalog, NO_DATABASE, QuerySource};
use column_cache::ColumnCache;
use datafusion::arrow::datatypes::Field;
use datafusion::catalog::{CatalogProviderList, MemoryCatalogProviderList};
use datafusion::common::ScalarValue;
use datafusion::execution::SessionStateBuilder;
use datafusion::execution::context::{SessionConfig, SessionState};
use datafusion::execution::disk_manager::{DiskManagerBuilder, DiskManagerMode};
use datafusion::execution::registry::FunctionRegistry;
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::logical_expr::LogicalPlan;
use datafusion::sql::parser::Statement as DfStatement;
use datafusion::sql::sqlparser::ast::{DescribeAlias, Query, Statement};
use orcinus_storage::{Keyspace, Transaction};
pub use provider::RowReader;
use std::sync::Arc;

/// Settings of the analytical executor.
#[derive(Debug, Clone)]
pub struct AnalyticsConfig {
    /// Bytes one query may hold in DataFusion's memory pool (hash tables, sorts, buffers).
    pub memory_limit: usize,
    /// Rows per record batch read from storage.
    pub batch_size: usize,
    /// DataFusion partitions per query (the server's cores).
    pub target_partitions: usize,
    /// Bytes of decoded columns the shared column cache may hold ([`column_cache`]; 0 turns it
    /// off).
    pub column_cache_bytes: usize,
}

/// The smallest default query memory budget.
const MIN_DEFAULT_MEMORY: usize = 512 << 20;
/// The smallest default column cache.
const MIN_COLUMN_CACHE: usize = 256 << 20;

impl Default for AnalyticsConfig {
    /// A quarter of the machine's memory per query (at least 512 MiB), one partition per
    /// core, and a column cache of an eighth of the memory (at least 256 MiB). A quarter leaves
    /// room for the block cache, other sessions and the OS; TPC-H at SF 1 needs about 1 GiB in
    /// its largest query (Q18's hash aggregate and joins) and about 1.2 GiB of cached columns.
    fn default() -> Self {
        let memory = physical_memory();
        Self {
            memory_limit: memory.map_or(MIN_DEFAULT_MEMORY, |m| (m / 4).max(MIN_DEFAULT_MEMORY)),
            batch_size: 8192,
            target_partitions: std::thread::available_parallelism().map_or(2, usize::from),
            column_cache_bytes: memory.map_or(MIN_COLUMN_CACHE, |m| (m / 8).max(MIN_COLUMN_CACHE)),
        }
    }
}

/// Total physical memory in bytes (Linux `/proc/meminfo`); `None` where unknown.
#[must_use]
pub fn physical_memory() -> Option<usize> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The analytical executor: its configuration and the column cache shared by its queries.
#[derive(Debug, Clone)]
pub struct AnalyticsEngine {
    config: AnalyticsConfig,
    cache: Arc<ColumnCache>,
}

impl Default for AnalyticsEngine {
    fn default() -> Self {
        Self::new(AnalyticsConfig::default())
    }
}

impl AnalyticsEngine {
    /// An executor with `config`.
    #[must_use]
    pub fn new(config: AnalyticsConfig) -> Self {
        let cache = Arc::new(ColumnCache::new(config.column_cache_bytes));
        Self { config, cache }
    }

    /// The shared column cache.
    #[must_use]
    pub fn column_cache(&self) -> &Arc<ColumnCache> {
        &self.cache
    }

    /// The column cache's counters.
    #[must_use]
    pub fn cache_stats(&self) -> column_cache::CacheStats {
        self.cache.stats()
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &AnalyticsConfig {
        &self.config
    }

    fn df_err(&self, e: datafusion::error::DataFusionError) -> SqlError {
        errors::from_datafusion(e, self.config.memory_limit)
    }

    fn session(&self, source: QuerySource, current_db: Option<&str>) -> SqlResult<SessionState> {
        let config = SessionConfig::new()
            .with_target_partitions(self.config.target_partitions.max(1))
            .with_batch_size(self.config.batch_size.max(1))
            .with_information_schema(false)
            .with_create_default_catalog_and_schema(false)
            .with_default_catalog_and_schema(CATALOG_NAME, current_db.unwrap_or(NO_DATABASE));
        let config = mysql_dialect::configure(config);
        let runtime = RuntimeEnvBuilder::new()
            .with_memory_limit(self.config.memory_limit, 1.0)
            .with_disk_manager_builder(
                DiskManagerBuilder::default().with_mode(DiskManagerMode::Disabled),
            )
            .build_arc()
            .map_err(|e| self.df_err(e))?;
        let catalogs = Arc::new(MemoryCatalogProviderList::new());
        catalogs.register_catalog(CATALOG_NAME.to_string(), Arc::new(DatabaseCatalog(source)));
        let mut state = SessionStateBuilder::new()
            .with_config(config)
            .with_runtime_env(runtime)
            .with_catalog_list(catalogs)
            .with_default_features()
            .build();
        for f in mysql_dialect::functions::all()
            .into_iter()
            .chain(mysql_dialect::date_functions::all())
        {
            state.register_udf(f).map_err(|e| self.df_err(e))?;
        }
        Ok(state)
    }

    /// Runs one query statement over `reader` and returns its result set. `params` bind the
    /// statement's `?` placeholders in order. The statement's interrupt (KILL QUERY) drops the
    /// running plan and its DataFusion stream and fails the query with 1317.
    pub async fn execute(
        &self,
        catalog: Arc<CatalogSnapshot>,
        data: Keyspace,
        reader: Arc<dyn RowReader>,
        current_db: Option<&str>,
        stmt: &Statement,
        params: &[Datum],
    ) -> SqlResult<StatementResult> {
        let source = QuerySource {
            catalog,
            reader,
            data,
            batch_size: self.config.batch_size,
            cache: None,
        };
        self.execute_source(source, current_db, stmt, params).await
    }

    /// Runs a query over `source` (see [`Self::execute`]).
    pub(crate) async fn execute_source(
        &self,
        source: QuerySource,
        current_db: Option<&str>,
        stmt: &Statement,
        params: &[Datum],
    ) -> SqlResult<StatementResult> {
        let run = self.execute_uninterrupted(source, current_db, stmt, params);
        orcinus_storage::interruptible(run).await?
    }

    async fn execute_uninterrupted(
        &self,
        source: QuerySource,
        current_db: Option<&str>,
        stmt: &Statement,
        params: &[Datum],
    ) -> SqlResult<StatementResult> {
        match stmt {
            Statement::Query(q) => self.run_query(source, current_db, q, params).await,
            Statement::Explain {
                describe_alias: DescribeAlias::Explain,
                analyze: false,
                verbose,
                query_plan: false,
                estimate: false,
                statement,
                format: None,
                options: None,
            } => match statement.as_ref() {
                Statement::Query(q) => self.explain(source, current_db, q, *verbose).await,
                other => Err(SqlError::unsupported(format!("EXPLAIN {other}"))),
            },
            other => Err(SqlError::unsupported(format!(
                "this statement in the analytical executor: {other}"
            ))),
        }
    }

    /// Runs `stmt` inside `txn` (its snapshot plus its own writes) and returns the transaction
    /// with the result. The transaction is `None` only after an internal error that kept a
    /// reference to it alive; it has then been rolled back.
    pub async fn execute_in_transaction(
        &self,
        catalog: Arc<CatalogSnapshot>,
        data: Keyspace,
        txn: Transaction,
        current_db: Option<&str>,
        stmt: &Statement,
        params: &[Datum],
    ) -> (Option<Transaction>, SqlResult<StatementResult>) {
        let shared = Arc::new(txn);
        let reader: Arc<dyn RowReader> = shared.clone();
        let res = self
            .execute(catalog, data, reader, current_db, stmt, params)
            .await;
        // DataFusion drops the tasks it spawned (and their scans) asynchronously, shortly after
        // the result is complete: wait for the last reference for a bounded time.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let mut shared = shared;
        loop {
            match Arc::try_unwrap(shared) {
                Ok(txn) => return (Some(txn), res),
                Err(still) if std::time::Instant::now() < deadline => {
                    shared = still;
                    tokio::task::yield_now().await;
                }
                Err(_) => {
                    return (
                        None,
                        Err(SqlError::Internal(
                            "analytical query kept its transaction alive".into(),
                        )),
                    );
                }
            }
        }
    }

    /// The call for the SQL engine: runs `stmt` inside the session's open transaction when
    /// there is one (lent for the query and put back into `txn`; left `None` only if it could
    /// not be reclaimed, i.e. after an internal error, when it has been rolled back), else over
    /// a fresh storage snapshot.
    pub async fn execute_for_session(
        &self,
        catalog: &Catalog,
        txn: &mut Option<Transaction>,
        current_db: Option<&str>,
        stmt: &Statement,
        params: &[Datum],
    ) -> SqlResult<StatementResult> {
        let snap = catalog.snapshot();
        let data = catalog.data().clone();
        match txn.take() {
            Some(t) => {
                let (back, res) = self
                    .execute_in_transaction(snap, data, t, current_db, stmt, params)
                    .await;
                *txn = back;
                res
            }
            None => {
                // Outside a transaction the query's snapshot is taken here, with the table
                // versions it sees, so the column cache can serve it.
                let (storage, versions) = catalog.versioned_snapshot();
                let source = QuerySource {
                    catalog: snap,
                    reader: Arc::new(storage),
                    data,
                    batch_size: self.config.batch_size,
                    cache: Some((self.cache.clone(), versions)),
                };
                self.execute_source(source, current_db, stmt, params).await
            }
        }
    }

    /// Plans a query: view expansion, MySQL rewrite, DataFusion planning, typed rewrites, parameters.
    async fn plan(
        &self,
        state: &SessionState,
        source: &QuerySource,
        current_db: Option<&str>,
        q: &Query,
        params: &[Datum],
    ) -> SqlResult<LogicalPlan> {
        let mut query = q.clone();
        if let Some(names) = mysql_dialect::output_names(q) {
            mysql_dialect::rewrite::dedupe_output_names(&mut query, &names);
        }
        let mut stmt = Statement::Query(Box::new(query));
        views::expand(&mut stmt, &source.catalog, current_db)?;
        mysql_dialect::rewrite::rewrite(&mut stmt)?;
        let plan = state
            .statement_to_plan(DfStatement::Statement(Box::new(stmt)))
            .await
            .map_err(|e| self.df_err(e))?;
        let plan = mysql_dialect::typed::apply(plan).map_err(|e| self.df_err(e))?;
        if params.is_empty() {
            return Ok(plan);
        }
        let values = params
            .iter()
            .map(scalar_of)
            .collect::<SqlResult<Vec<ScalarValue>>>()?;
        plan.with_param_values(values).map_err(|e| self.df_err(e))
    }

    async fn run_query(
        &self,
        source: QuerySource,
        current_db: Option<&str>,
        q: &Query,
        params: &[Datum],
    ) -> SqlResult<StatementResult> {
        let state = self.session(source.clone(), current_db)?;
        let plan = self.plan(&state, &source, current_db, q, params).await?;
        let fields: Vec<Field> = plan
            .schema()
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        let physical = state
            .create_physical_plan(&plan)
            .await
            .map_err(|e| self.df_err(e))?;
        let batches = datafusion::physical_plan::collect(physical, state.task_ctx())
            .await
            .map_err(|e| self.df_err(e))?;
        let mut res = results::to_statement_result(&fields, &batches)?;
        if let StatementResult::Rows { columns, .. } = &mut res {
            qualify_columns(columns, &plan);
            if let Some(names) = mysql_dialect::output_names(q) {
                rename_columns(columns, names);
            }
        }
        Ok(res)
    }

    /// `EXPLAIN <query>`: one row, one column `EXPLAIN` holding the optimized logical plan and
    /// the physical plan as DataFusion prints them (like MySQL's `FORMAT=TREE`, one text cell).
    async fn explain(
        &self,
        source: QuerySource,
        current_db: Option<&str>,
        q: &Query,
        verbose: bool,
    ) -> SqlResult<StatementResult> {
        let state = self.session(source.clone(), current_db)?;
        let plan = self.plan(&state, &source, current_db, q, &[]).await?;
        let optimized = state.optimize(&plan).map_err(|e| self.df_err(e))?;
        let physical = state
            .create_physical_plan(&plan)
            .await
            .map_err(|e| self.df_err(e))?;
        let text = format!(
            "logical plan:\n{}\nphysical plan:\n{}",
            optimized.display_indent(),
            datafusion::physical_plan::displayable(physical.as_ref()).indent(verbose)
        );
        Ok(StatementResult::Rows {
            columns: vec![explain_column()],
            rows: vec![vec![Datum::Bytes(text.into_bytes())]],
        })
    }

    /// The result columns a query would return (for COM_STMT_PREPARE), without running it.
    pub async fn describe(
        &self,
        catalog: Arc<CatalogSnapshot>,
        data: Keyspace,
        reader: Arc<dyn RowReader>,
        current_db: Option<&str>,
        q: &Query,
    ) -> SqlResult<Vec<OutputColumn>> {
        let source = QuerySource {
            catalog,
            reader,
            data,
            batch_size: self.config.batch_size,
            cache: None,
        };
        let state = self.session(source.clone(), current_db)?;
        let plan = self.plan(&state, &source, current_db, q, &[]).await?;
        let mut columns = plan
            .schema()
            .fields()
            .iter()
            .map(|f| results::output_column(f))
            .collect::<SqlResult<Vec<_>>>()?;
        qualify_columns(&mut columns, &plan);
        if let Some(names) = mysql_dialect::output_names(q) {
            rename_columns(&mut columns, names);
        }
        Ok(columns)
    }
}

/// MySQL reports a column's table under the name the query gave it (`FROM t AS x` → `x`):
/// a plain column reference keeps its qualifier in the plan's output schema. Columns that went
/// through an expression or an output alias have no qualifier and keep their base table.
fn qualify_columns(columns: &mut [OutputColumn], plan: &LogicalPlan) {
    for (column, (qualifier, _)) in columns.iter_mut().zip(plan.schema().iter()) {
        if let Some(q) = qualifier
            && !column.table.is_empty()
        {
            column.table = q.table().to_string();
        }
    }
}

fn rename_columns(columns: &mut [OutputColumn], names: Vec<String>) {
    if names.len() == columns.len() {
        for (c, n) in columns.iter_mut().zip(names) {
            c.name = n;
        }
    }
}

/// A bound parameter as a DataFusion literal.
fn scalar_of(d: &Datum) -> SqlResult<ScalarValue> {
    Ok(match d {
        Datum::Null => ScalarValue::Null,
        Datum::Int(v) => ScalarValue::Int64(Some(*v)),
        Datum::UInt(v) => ScalarValue::UInt64(Some(*v)),
        Datum::Double(v) => ScalarValue::Float64(Some(*v)),
        Datum::Decimal { unscaled, scale } => {
            let digits = unscaled
                .unsigned_abs()
                .checked_ilog10()
                .map_or(1, |l| l + 1);
            let precision = u8::try_from(digits).unwrap_or(38).max(*scale).clamp(1, 38);
            ScalarValue::Decimal128(Some(*unscaled), precision, *scale as i8)
        }
        Datum::Bytes(b) => match std::str::from_utf8(b) {
            Ok(s) => ScalarValue::Utf8(Some(s.to_string())),
            Err(_) => ScalarValue::Binary(Some(b.clone())),
        },
        Datum::Date(v) => ScalarValue::Date32(Some(*v)),
        Datum::DateTime(v) => ScalarValue::TimestampMicrosecond(Some(*v), None),
    })
}
