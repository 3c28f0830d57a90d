//! Tests of the analytical executor: tables created and filled through the engine's normal
//! DDL and write path ([`SqlExecutor::execute`]), queried through [`AnalyticsEngine`] over a
//! fresh storage snapshot (or a transaction).

mod basics;
mod date_functions;
mod tpch;
mod tpch_data;
mod views;

use super::{AnalyticsConfig, AnalyticsEngine, RowReader};
use crate::catalog::Catalog;
use crate::error::SqlResult;
use crate::result::StatementResult;
use crate::{SessionState, SqlExecutor, plan, rowio, value};
use orcinus_storage::{Engine, Keyspace, ScanIter, Snapshot, StorageConfig, Transaction};
use std::ops::Bound;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A temp database `t` with the SQL engine and the analytical executor.
pub struct Fixture {
    _dir: tempfile::TempDir,
    pub storage: Engine,
    pub sql: Arc<SqlExecutor>,
    pub session: SessionState,
    pub analytics: AnalyticsEngine,
}

/// Counts the rows a scan yields (to observe key-range pushdown).
struct CountingReader {
    inner: Snapshot,
    rows: Arc<AtomicUsize>,
}

impl RowReader for CountingReader {
    fn scan(&self, ks: &Keyspace, lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> ScanIter {
        let rows = self.rows.clone();
        Box::new(
            RowReader::scan(&self.inner, ks, lower, upper).inspect(move |_| {
                rows.fetch_add(1, Ordering::Relaxed);
            }),
        )
    }

    fn sample_keys(
        &self,
        ks: &Keyspace,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        limit: usize,
        reverse: bool,
    ) -> orcinus_storage::Result<Vec<Vec<u8>>> {
        RowReader::sample_keys(&self.inner, ks, lower, upper, limit, reverse)
    }
}

impl Fixture {
    pub async fn new(config: AnalyticsConfig) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = StorageConfig::for_test(dir.path().to_path_buf());
        cfg.sync = orcinus_storage::SyncPolicy::None;
        cfg.cache_size_bytes = 32 << 20;
        cfg.memtable_bytes = 8 << 20;
        let storage = Engine::open(cfg).unwrap();
        let sql = SqlExecutor::open(storage.clone()).unwrap();
        let mut f = Self {
            _dir: dir,
            storage,
            sql,
            session: SessionState::new(None),
            analytics: AnalyticsEngine::new(config),
        };
        f.exec("CREATE DATABASE t").await;
        f.exec("USE t").await;
        f
    }

    /// Runs statements through the SQL engine; all must succeed.
    pub async fn exec(&mut self, sql: &str) {
        for r in self.sql.execute(&mut self.session, sql).await {
            if let Err(e) = r {
                panic!("{}: {e}", &sql[..sql.len().min(200)]);
            }
        }
    }

    fn catalog(&self) -> Catalog {
        Catalog::open(&self.storage).unwrap()
    }

    pub async fn query_db(&self, db: Option<&str>, sql: &str) -> SqlResult<StatementResult> {
        let stmt = plan::parse(sql)?.remove(0);
        let cat = self.catalog();
        let reader: Arc<dyn RowReader> = Arc::new(self.storage.snapshot());
        self.analytics
            .execute(cat.snapshot(), cat.data().clone(), reader, db, &stmt, &[])
            .await
    }

    pub async fn query_params(
        &self,
        sql: &str,
        params: &[crate::Datum],
    ) -> SqlResult<StatementResult> {
        let stmt = plan::parse(sql)?.remove(0);
        let cat = self.catalog();
        let reader: Arc<dyn RowReader> = Arc::new(self.storage.snapshot());
        self.analytics
            .execute(
                cat.snapshot(),
                cat.data().clone(),
                reader,
                Some("t"),
                &stmt,
                params,
            )
            .await
    }

    pub async fn query(&self, sql: &str) -> SqlResult<StatementResult> {
        self.query_db(Some("t"), sql).await
    }

    /// Runs a query and reports how many stored rows its scans read.
    pub async fn query_counting(&self, sql: &str) -> (SqlResult<StatementResult>, usize) {
        let stmt = plan::parse(sql).unwrap().remove(0);
        let cat = self.catalog();
        let rows = Arc::new(AtomicUsize::new(0));
        let reader: Arc<dyn RowReader> = Arc::new(CountingReader {
            inner: self.storage.snapshot(),
            rows: rows.clone(),
        });
        let res = self
            .analytics
            .execute(
                cat.snapshot(),
                cat.data().clone(),
                reader,
                Some("t"),
                &stmt,
                &[],
            )
            .await;
        (res, rows.load(Ordering::Relaxed))
    }

    pub async fn query_in(
        &self,
        txn: Transaction,
        sql: &str,
    ) -> (Option<Transaction>, SqlResult<StatementResult>) {
        let stmt = plan::parse(sql).unwrap().remove(0);
        let cat = self.catalog();
        self.analytics
            .execute_in_transaction(
                cat.snapshot(),
                cat.data().clone(),
                txn,
                Some("t"),
                &stmt,
                &[],
            )
            .await
    }

    /// Runs CREATE VIEW / DROP VIEW through the analytics view DDL (as the engine's DDL path
    /// will).
    pub async fn view_ddl(&self, sql: &str) -> SqlResult<StatementResult> {
        use datafusion::sql::sqlparser::ast::{ObjectType, Statement};
        let stmt = plan::parse(sql)?.remove(0);
        let cat = self.catalog();
        match &stmt {
            Statement::CreateView(cv) => {
                super::views::create_view(&self.analytics, &cat, cv, Some("t")).await
            }
            Statement::Drop {
                object_type: ObjectType::View,
                names,
                if_exists,
                ..
            } => super::views::drop_views(&cat, names, *if_exists, Some("t")).await,
            other => panic!("not view DDL: {other}"),
        }
    }

    /// Writes row (id, name, NULL…) of table `t.<table>` into `txn` only.
    pub async fn put_row(&self, txn: &mut Transaction, table: &str, id: i64, name: &str) {
        let cat = self.catalog();
        let t = cat.snapshot().table("t", table).unwrap();
        let mut row = vec![crate::Datum::Null; t.def.columns.len()];
        row[0] = crate::Datum::Int(id);
        row[1] = crate::Datum::Bytes(name.as_bytes().to_vec());
        let pk = rowio::pk_encoding(&t.def, &t.types, &row, None).unwrap();
        let key = rowio::row_key(t.def.id, &pk);
        let value = rowio::encode_row(&t, &row).unwrap();
        txn.put(cat.data(), &key, value).await.unwrap();
    }
}

/// Rows of a result set as display strings.
pub fn display_rows(r: &StatementResult) -> Vec<Vec<String>> {
    match r {
        StatementResult::Rows { rows, .. } => rows
            .iter()
            .map(|r| r.iter().map(value::display).collect())
            .collect(),
        other => panic!("expected rows, got {other:?}"),
    }
}
