//! Tests of the SQL engine without a socket: a temp storage engine per test, sessions driven
//! through the public API exactly as the protocol layer drives them.

mod analytic;
mod column_cache;
mod ddl;
mod dml;
mod locking_reads;
mod select;
mod show;
mod sysbench;
mod txn;

use crate::value;
use crate::{Datum, SessionState, SqlError, SqlExecutor, StatementResult};
use orcinus_storage::{Engine, StorageConfig};
use std::sync::Arc;

/// A temp data directory with an open SQL engine.
pub struct TestDb {
    pub dir: tempfile::TempDir,
    pub sql: Arc<SqlExecutor>,
}

impl TestDb {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let sql = Self::open_at(dir.path());
        Self { dir, sql }
    }

    fn open_at(path: &std::path::Path) -> Arc<SqlExecutor> {
        let storage = Engine::open(StorageConfig::for_test(path.to_path_buf())).unwrap();
        SqlExecutor::open(storage).unwrap()
    }

    /// A fresh database whose executor admits at most `limit` open transactions, revoking
    /// the slots of transactions idle for `idle_revoke` ([`crate::admission`]).
    pub fn with_gate(limit: usize, idle_revoke: std::time::Duration) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let storage = Engine::open(StorageConfig::for_test(dir.path().to_path_buf())).unwrap();
        let gate = crate::admission::TxnGate::new(limit, idle_revoke);
        let sql = SqlExecutor::open_configured(storage, Default::default(), gate).unwrap();
        Self { dir, sql }
    }

    /// Closes and reopens the engine on the same directory.
    pub fn reopen(self) -> Self {
        let TestDb { dir, sql } = self;
        drop(sql);
        let sql = Self::open_at(dir.path());
        Self { dir, sql }
    }

    /// A session with database `sbtest` created and selected.
    pub async fn session(&self) -> SessionState {
        let mut s = SessionState::new(None);
        self.ok(&mut s, "CREATE DATABASE IF NOT EXISTS sbtest")
            .await;
        self.ok(&mut s, "USE sbtest").await;
        s
    }

    /// Runs statements that must all succeed; returns the last result.
    pub async fn ok(&self, s: &mut SessionState, sql: &str) -> StatementResult {
        let mut res = self.sql.execute(s, sql).await;
        let last = res.pop().unwrap();
        for r in res {
            r.unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
        last.unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// Runs a statement that must fail; returns its error.
    pub async fn err(&self, s: &mut SessionState, sql: &str) -> SqlError {
        match self.sql.execute(s, sql).await.pop().unwrap() {
            Ok(r) => panic!("{sql}: expected an error, got {r:?}"),
            Err(e) => e,
        }
    }

    /// Rows of a query as display strings.
    pub async fn rows(&self, s: &mut SessionState, sql: &str) -> Vec<Vec<String>> {
        rows_of(self.ok(s, sql).await)
    }
}

pub fn rows_of(r: StatementResult) -> Vec<Vec<String>> {
    match r {
        StatementResult::Rows { rows, .. } => rows
            .iter()
            .map(|r| r.iter().map(value::display).collect())
            .collect(),
        other => panic!("expected rows, got {other:?}"),
    }
}

pub fn affected(r: &StatementResult) -> u64 {
    match r {
        StatementResult::Affected { affected_rows, .. } => *affected_rows,
        other => panic!("expected OK, got {other:?}"),
    }
}

pub fn int(v: i64) -> Datum {
    Datum::Int(v)
}

pub fn text(s: &str) -> Datum {
    Datum::Bytes(s.as_bytes().to_vec())
}

pub const SBTEST: &str = "CREATE TABLE sbtest1(id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)) /*! ENGINE = innodb */";
