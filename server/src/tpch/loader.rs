//! Loads generated TPC-H rows through the SQL write path: the same [`SqlExecutor::execute`] the
//! MySQL port calls, with multi-row `INSERT … VALUES` statements of [`LoadOptions::rows_per_insert`]
//! rows inside explicit transactions of [`LoadOptions::rows_per_commit`] rows. Each table is
//! split into [`LoadOptions::parts`] key ranges loaded concurrently, one session each.
//!
//! Invariants: the database must not exist yet (`CREATE DATABASE` without `IF NOT EXISTS`, so an
//! old load is never mixed with a new one); every statement's result is checked and the first
//! failure stops the load with the table and row it was at; each committed transaction is
//! durable under the engine's sync policy before its session starts the next one. Progress goes to the
//! writer given (stderr in the binary), one `\r`-rewritten line per table.

use super::schema::{TABLES, TableSpec};
use orcinus_sql::{SessionState, SqlExecutor, StatementResult};
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What to load and how to batch it.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadOptions {
    /// TPC-H scale factor (> 0).
    pub sf: f64,
    /// Database the tables are created in.
    pub database: String,
    /// Rows per `INSERT` statement.
    pub rows_per_insert: usize,
    /// Rows per transaction (rounded up to whole statements).
    pub rows_per_commit: usize,
    /// Parts each table is split into and loaded concurrently (one session each).
    pub parts: usize,
}

/// One loaded table.
#[derive(Debug, Clone, PartialEq)]
pub struct TableReport {
    /// Table name.
    pub table: &'static str,
    /// Rows inserted.
    pub rows: u64,
    /// Time spent generating and inserting them.
    pub elapsed: Duration,
}

/// How often the progress line is rewritten.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);

/// Why a load failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    /// What failed, in one line.
    pub message: String,
    /// True once the database was created: it now holds a partial load.
    pub database_created: bool,
}

/// Creates `options.database` and its eight tables and loads them; returns one report per table.
pub async fn load(
    executor: &Arc<SqlExecutor>,
    options: &LoadOptions,
    progress: &mut impl Write,
) -> Result<Vec<TableReport>, LoadError> {
    let mut session = SessionState::new(None);
    let create = format!("CREATE DATABASE `{}`", options.database);
    run(executor, &mut session, &create)
        .await
        .map_err(|message| LoadError {
            message,
            database_created: false,
        })?;
    let partial = |message: String| LoadError {
        message,
        database_created: true,
    };
    executor
        .use_database(&mut session, &options.database)
        .map_err(|e| partial(e.to_string()))?;
    let mut reports = Vec::with_capacity(TABLES.len());
    for table in &TABLES {
        run(executor, &mut session, table.ddl)
            .await
            .map_err(partial)?;
        let report = load_table(executor, table, options, progress)
            .await
            .map_err(partial)?;
        reports.push(report);
    }
    Ok(reports)
}

/// Loads one table in [`LoadOptions::parts`] concurrent parts (disjoint key ranges, one
/// session and its own transactions each), reporting the rows done so far.
async fn load_table(
    executor: &Arc<SqlExecutor>,
    table: &'static TableSpec,
    options: &LoadOptions,
    progress: &mut impl Write,
) -> Result<TableReport, String> {
    let started = Instant::now();
    let total = table.row_count(options.sf);
    let parts = i32::try_from(options.parts.max(1)).unwrap_or(1);
    let done = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for part in 1..=parts {
        let executor = executor.clone();
        let options = options.clone();
        let done = done.clone();
        tasks.push(tokio::spawn(async move {
            load_part(&executor, table, &options, part, parts, &done).await
        }));
    }
    // The first failing part stops the others.
    let mut running: Vec<_> = tasks.into_iter().map(Some).collect();
    while running.iter().any(Option::is_some) {
        tokio::time::sleep(PROGRESS_EVERY).await;
        for slot in &mut running {
            let Some(task) = slot.take_if(|t| t.is_finished()) else {
                continue;
            };
            let outcome = task
                .await
                .map_err(|e| format!("{}: a load task failed: {e}", table.name))
                .and_then(|r| r);
            if let Err(e) = outcome {
                for other in running.iter().flatten() {
                    other.abort();
                }
                return Err(e);
            }
        }
        let so_far = done.load(Ordering::Relaxed);
        report(
            progress,
            table.name,
            so_far,
            total,
            started.elapsed(),
            false,
        );
    }
    let done = done.load(Ordering::Relaxed);
    if done != total {
        return Err(format!(
            "{}: generated {done} rows, expected {total}",
            table.name
        ));
    }
    let elapsed = started.elapsed();
    report(progress, table.name, done, total, elapsed, true);
    Ok(TableReport {
        table: table.name,
        rows: done,
        elapsed,
    })
}

/// Inserts part `part` of `parts` of the table's rows in its own session, adding the rows
/// inserted to `done` as it goes.
async fn load_part(
    executor: &SqlExecutor,
    table: &TableSpec,
    options: &LoadOptions,
    part: i32,
    parts: i32,
    done: &AtomicU64,
) -> Result<(), String> {
    let mut session = SessionState::new(None);
    executor
        .use_database(&mut session, &options.database)
        .map_err(|e| e.to_string())?;
    let session = &mut session;
    let per_insert = options.rows_per_insert.max(1);
    let per_commit = options.rows_per_commit.max(per_insert);
    let prefix = format!("INSERT INTO `{}` VALUES ", table.name);
    let mut statement = String::with_capacity(per_insert * 200);
    let mut rows_in_statement = 0usize;
    let mut rows_in_txn = 0usize;
    let mut inserted = 0u64;
    for line in table.part_rows(options.sf, part, parts) {
        if rows_in_txn == 0 && rows_in_statement == 0 {
            run(executor, session, "BEGIN").await?;
        }
        statement.push_str(if rows_in_statement == 0 { &prefix } else { "," });
        table.append_tuple(&line, &mut statement)?;
        rows_in_statement += 1;
        if rows_in_statement < per_insert {
            continue;
        }
        run_insert(executor, session, table, &mut statement, part, inserted).await?;
        inserted += rows_in_statement as u64;
        done.fetch_add(rows_in_statement as u64, Ordering::Relaxed);
        rows_in_txn += rows_in_statement;
        rows_in_statement = 0;
        if rows_in_txn >= per_commit {
            run(executor, session, "COMMIT").await?;
            rows_in_txn = 0;
        }
    }
    if rows_in_statement > 0 {
        run_insert(executor, session, table, &mut statement, part, inserted).await?;
        done.fetch_add(rows_in_statement as u64, Ordering::Relaxed);
        rows_in_txn += rows_in_statement;
    }
    if rows_in_txn > 0 {
        run(executor, session, "COMMIT").await?;
    }
    Ok(())
}

/// Runs the pending multi-row INSERT in `statement` and clears it.
async fn run_insert(
    executor: &SqlExecutor,
    session: &mut SessionState,
    table: &TableSpec,
    statement: &mut String,
    part: i32,
    rows_before: u64,
) -> Result<(), String> {
    let outcome = run(executor, session, statement).await;
    statement.clear();
    outcome.map(drop).map_err(|e| {
        format!(
            "{}: INSERT of the rows after row {rows_before} of part {part} failed: {e}",
            table.name
        )
    })
}

/// Runs one statement and turns its error into a message naming the statement's start.
async fn run(
    executor: &SqlExecutor,
    session: &mut SessionState,
    sql: &str,
) -> Result<StatementResult, String> {
    let mut results = executor.execute(session, sql).await;
    match (results.pop(), results.is_empty()) {
        (Some(Ok(result)), true) => Ok(result),
        (Some(Err(e)), _) => {
            let head: String = sql.chars().take(60).collect();
            Err(format!("{head}…: {e}"))
        }
        _ => Err(format!("expected one statement result for {sql:.60}")),
    }
}

/// Writes `table: done/total rows, rate rows/s`, rewriting the line until `finished`.
fn report(
    out: &mut impl Write,
    table: &str,
    done: u64,
    total: u64,
    elapsed: Duration,
    finished: bool,
) {
    let rate = rows_per_second(done, elapsed);
    let end = if finished { "\n" } else { "" };
    // Progress is best effort: a closed stderr must not fail the load.
    let _ = write!(
        out,
        "\r{table:>8}: {done:>10}/{total} rows, {rate:>9.0} rows/s, {:>7.1} s{end}",
        elapsed.as_secs_f64()
    );
    let _ = out.flush();
}

/// Rows per second over `elapsed` (0 for an empty interval).
#[must_use]
pub fn rows_per_second(rows: u64, elapsed: Duration) -> f64 {
    let secs = elapsed.as_secs_f64();
    if secs > 0.0 { rows as f64 / secs } else { 0.0 }
}
