//! The SQL behaviour suite: every `tests/slt/*.slt` file (sqllogictest format) run over the real
//! MySQL wire against the real server, one fresh database per file.
//!
//! - `ORCINUS_SLT_ADDR=host:port` runs the files against another server instead (e.g. MySQL or
//!   MariaDB, to check that an expected answer is the reference behaviour); the default starts
//!   Orcinus through the harness.
//! - `ORCINUS_SLT_COMPLETE=1` rewrites each file's expected output from the server's answers
//!   (DataFusion's `--complete`); review the diff before committing it.
//! - Records that only Orcinus (MySQL 8.0 behaviour) should run are marked `onlyif orcinus`; the
//!   runner labels itself `reference` when pointed at another server.
//! - `ORCINUS_SLT_FILTER=substring` runs only the files whose name contains it.
//! - Against Orcinus every file runs twice: in mode `auto` (fast path where it can, DataFusion
//!   for the rest) and in mode `datafusion` (every connection first runs
//!   `SET orcinus_execution_mode = 'datafusion'`, so every table-reading SELECT goes through
//!   DataFusion). Both executors must give the same answers; failures name the mode.
//!
//! Values print as the text protocol sends them, NULL as `NULL` and the empty string as
//! `(empty)`; column types print as `I` (integer types), `R` (DECIMAL, FLOAT, DOUBLE) or `T`.
//! Queries without ORDER BY should use `rowsort`. Errors print as `ERROR <code> (<state>): <msg>`,
//! so `statement error 1062` matches on the MySQL error code.

use crate::harness::TestServer;
use crate::mysql_client::opts;
use async_trait::async_trait;
use mysql_async::consts::ColumnType as WireType;
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Row, Value};
use sqllogictest::{
    AsyncDB, DBOutput, DefaultColumnType, Runner, default_column_validator, default_normalizer,
    default_validator,
};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// One client connection as the runner sees it; `label` is the engine name `onlyif` tests.
struct MysqlWire {
    conn: Option<Conn>,
    label: &'static str,
}

#[async_trait]
impl AsyncDB for MysqlWire {
    type Error = mysql_async::Error;
    type ColumnType = DefaultColumnType;

    async fn run(&mut self, sql: &str) -> Result<DBOutput<DefaultColumnType>, Self::Error> {
        let Some(conn) = self.conn.as_mut() else {
            return Err(mysql_async::DriverError::ConnectionClosed.into());
        };
        let mut result = conn.query_iter(sql).await?;
        let columns = result.columns().map(|c| c.to_vec()).unwrap_or_default();
        if columns.is_empty() {
            let affected = result.affected_rows();
            result.drop_result().await?;
            return Ok(DBOutput::StatementComplete(affected));
        }
        let rows: Vec<Row> = result.collect().await?;
        let types = columns
            .iter()
            .map(|c| column_type(c.column_type()))
            .collect();
        let rows = rows
            .into_iter()
            .map(|row| row.unwrap().into_iter().map(render).collect())
            .collect();
        Ok(DBOutput::Rows { types, rows })
    }

    /// Disconnects, so an open transaction or metadata lock cannot outlive the file (the
    /// database is dropped next).
    async fn shutdown(&mut self) {
        if let Some(conn) = self.conn.take() {
            let _ = conn.disconnect().await;
        }
    }

    fn engine_name(&self) -> &str {
        self.label
    }

    async fn sleep(dur: std::time::Duration) {
        tokio::time::sleep(dur).await;
    }
}

fn column_type(wire: WireType) -> DefaultColumnType {
    match wire {
        WireType::MYSQL_TYPE_TINY
        | WireType::MYSQL_TYPE_SHORT
        | WireType::MYSQL_TYPE_INT24
        | WireType::MYSQL_TYPE_LONG
        | WireType::MYSQL_TYPE_LONGLONG
        | WireType::MYSQL_TYPE_YEAR => DefaultColumnType::Integer,
        WireType::MYSQL_TYPE_DECIMAL
        | WireType::MYSQL_TYPE_NEWDECIMAL
        | WireType::MYSQL_TYPE_FLOAT
        | WireType::MYSQL_TYPE_DOUBLE => DefaultColumnType::FloatingPoint,
        _ => DefaultColumnType::Text,
    }
}

/// A text-protocol value as the .slt files spell it.
fn render(value: Value) -> String {
    match value {
        Value::NULL => "NULL".to_owned(),
        Value::Bytes(bytes) if bytes.is_empty() => "(empty)".to_owned(),
        Value::Bytes(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        other => other.as_sql(true),
    }
}

fn slt_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("slt")
}

fn slt_files() -> Vec<PathBuf> {
    let filter = std::env::var("ORCINUS_SLT_FILTER").unwrap_or_default();
    let mut files: Vec<PathBuf> = std::fs::read_dir(slt_dir())
        .expect("tests/slt exists")
        .map(|entry| entry.expect("readable tests/slt entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "slt"))
        .filter(|p| p.to_string_lossy().contains(&filter))
        .collect();
    files.sort();
    files
}

/// Which executor the connections of a run ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The server's default (`auto` on Orcinus; the only mode of a reference server).
    Auto,
    /// `SET orcinus_execution_mode = 'datafusion'` on every connection.
    DataFusion,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::DataFusion => "datafusion",
        }
    }
}

/// Runs (or, with `complete`, rewrites) one file in a fresh database named after it.
async fn run_file(
    addr: &str,
    label: &'static str,
    mode: Mode,
    file: &Path,
    complete: bool,
) -> Result<(), String> {
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().replace('-', "_"));
    let database = format!("slt_{}", stem.unwrap_or_default());
    let addr: SocketAddr = addr
        .parse()
        .map_err(|e| format!("server address {addr}: {e}"))?;
    let mut admin = Conn::new(opts(addr, None))
        .await
        .map_err(|e| format!("connect to {addr}: {e}"))?;
    admin
        .query_drop(format!("DROP DATABASE IF EXISTS {database}"))
        .await
        .map_err(|e| e.to_string())?;
    admin
        .query_drop(format!("CREATE DATABASE {database}"))
        .await
        .map_err(|e| e.to_string())?;

    let file_opts = opts(addr, Some(&database));
    let mut runner = Runner::new(move || {
        let file_opts = file_opts.clone();
        async move {
            let mut conn = Conn::new(file_opts).await?;
            if mode == Mode::DataFusion {
                conn.query_drop("SET orcinus_execution_mode = 'datafusion'")
                    .await?;
            }
            Ok::<_, mysql_async::Error>(MysqlWire {
                conn: Some(conn),
                label,
            })
        }
    });
    let outcome = if complete {
        runner
            .update_test_file(
                file,
                " ",
                default_validator,
                default_normalizer,
                default_column_validator,
            )
            .await
            .map_err(|e| e.to_string())
    } else {
        runner
            .run_file_async(file)
            .await
            .map_err(|e| e.display(false).to_string())
    };
    runner.shutdown_async().await;
    admin
        .query_drop(format!("DROP DATABASE {database}"))
        .await
        .map_err(|e| e.to_string())?;
    let _ = admin.disconnect().await;
    outcome
}

#[test]
fn sql_logic_tests() {
    let files = slt_files();
    assert!(
        !files.is_empty(),
        "no .slt files under {}",
        slt_dir().display()
    );
    let complete = std::env::var_os("ORCINUS_SLT_COMPLETE").is_some();
    let server = match std::env::var("ORCINUS_SLT_ADDR") {
        Ok(_) => None,
        Err(_) => Some(TestServer::start()),
    };
    let addr = server.as_ref().map_or_else(
        || std::env::var("ORCINUS_SLT_ADDR").unwrap_or_default(),
        |s| s.mysql_addr().to_string(),
    );
    // `onlyif orcinus` marks MySQL 8.0 behaviour a reference server (e.g. MariaDB) does not share.
    let label = if server.is_some() {
        "orcinus"
    } else {
        "reference"
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    // A reference server has no execution modes; `--complete` writes what `auto` answers.
    let modes: &[Mode] = if server.is_some() && !complete {
        &[Mode::Auto, Mode::DataFusion]
    } else {
        &[Mode::Auto]
    };
    let failures: Vec<String> = modes
        .iter()
        .flat_map(|mode| files.iter().map(move |file| (*mode, file)))
        .filter_map(|(mode, file)| {
            runtime
                .block_on(run_file(&addr, label, mode, file, complete))
                .err()
                .map(|e| format!("{} (mode {}):\n{e}", file.display(), mode.name()))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} .slt runs failed:\n\n{}",
        failures.len(),
        files.len() * modes.len(),
        failures.join("\n\n")
    );
}
