//! `LOAD DATA [LOCAL] INFILE` (MySQL 8.0): [`parse`] reads the statement, [`fields`] splits
//! the input into records as chunks arrive, [`convert`] turns fields into column values, and
//! [`execute`] writes the rows through the normal write path ([`crate::write::insert_row`]).
//!
//! Where the bytes come from is the caller's business ([`ChunkSource`]): the session reads a
//! server-side file (under `secure_file_priv`) or asks the client for its file over the wire.
//!
//! Invariants:
//! - One statement: the rows are buffered in one statement context and applied to the
//!   transaction only when the whole input loaded; under autocommit the statement is its own
//!   transaction, committed once. A failure part-way (an error, KILL QUERY) leaves no row
//!   behind. The input itself is streamed — only the write set is held, as for any statement.
//! - Duplicates: an error (1062) by default, skipped with a warning under IGNORE (and under
//!   LOCAL, as MySQL does), replaced under REPLACE.
//! - Data problems are errors in strict mode and warnings under IGNORE or LOCAL (`convert.rs`);
//!   too few / too many fields are 1261 / 1262 the same way.
//! - KILL QUERY is checked between rows and ends the statement with 1317.

pub mod convert;
pub mod fields;
pub mod parse;

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use datafusion::sql::sqlparser::dialect::MySqlDialect;
use datafusion::sql::sqlparser::parser::Parser;
use orcinus_storage::{Interrupt, Transaction};

use crate::bind::Binder;
use crate::catalog::Table;
use crate::engine::{SessionState, SqlExecutor};
use crate::error::{SqlError, SqlResult};
use crate::expr::BExpr;
use crate::stmt_ctx::StmtCtx;
use crate::types::Datum;
use crate::write;

pub use convert::Warning;
use fields::{Field, RecordReader};
pub use parse::{Duplicates, LoadStatement, Target};

/// How many warnings are kept for `SHOW WARNINGS` (MySQL's `max_error_count` default); the
/// count in the OK packet covers all of them.
pub const MAX_KEPT_WARNINGS: usize = 1024;

/// The input of a LOAD DATA statement, chunk by chunk.
pub trait ChunkSource: Send {
    /// The next chunk; `None` at the end of the input.
    fn next_chunk(&mut self) -> impl Future<Output = SqlResult<Option<Vec<u8>>>> + Send;
}

/// What a completed LOAD DATA reports.
#[derive(Debug, Default)]
pub struct LoadOutcome {
    /// Records read (after IGNORE n LINES).
    pub records: u64,
    /// Rows deleted by REPLACE.
    pub deleted: u64,
    /// Records skipped as duplicates (IGNORE / LOCAL).
    pub skipped: u64,
    /// Affected rows: inserted plus deleted.
    pub affected: u64,
    /// Every warning raised (the first [`MAX_KEPT_WARNINGS`] kept).
    pub warnings: Vec<Warning>,
    /// Number of warnings raised.
    pub warning_count: u64,
    /// The first AUTO_INCREMENT value generated, if any.
    pub first_generated: Option<u64>,
}

impl LoadOutcome {
    /// MySQL's info text: `Records: n  Deleted: d  Skipped: s  Warnings: w`.
    #[must_use]
    pub fn info(&self) -> String {
        format!(
            "Records: {}  Deleted: {}  Skipped: {}  Warnings: {}",
            self.records, self.deleted, self.skipped, self.warning_count
        )
    }
}

/// A SET assignment bound against the target table.
struct BoundSet {
    column: usize,
    expr: BExpr,
    variables: Vec<String>,
}

/// The statement bound to its table.
struct Plan {
    table: Arc<Table>,
    /// Per input field: the column index, or the variable name.
    targets: Vec<Result<usize, String>>,
    set: Vec<BoundSet>,
    duplicates: Duplicates,
    lenient: bool,
    /// The statement's start (microseconds since the epoch): `DEFAULT CURRENT_TIMESTAMP`.
    now_micros: i64,
}

fn bind(stmt: &LoadStatement, table: Arc<Table>) -> SqlResult<Plan> {
    let def = &table.def;
    let column = |name: &str| {
        def.columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
            .ok_or_else(|| SqlError::UnknownColumn {
                column: name.to_owned(),
                context: "field list".to_owned(),
            })
    };
    let targets = match &stmt.targets {
        None => (0..def.columns.len()).map(Ok).collect(),
        Some(list) => list
            .iter()
            .map(|t| match t {
                Target::Column(c) => column(c).map(Ok),
                Target::Variable(v) => Ok(Err(v.clone())),
            })
            .collect::<SqlResult<Vec<_>>>()?,
    };
    let mut set = Vec::new();
    for a in &stmt.set {
        let col = column(&a.column)?;
        let parsed = Parser::new(&MySqlDialect {})
            .try_with_sql(&a.expr)
            .and_then(|mut p| p.parse_expr())
            .map_err(|_| SqlError::Syntax {
                near: a.expr.chars().take(80).collect(),
                line: 1,
            })?;
        let mut binder = Binder::new(Some(def), None);
        binder.context = "field list";
        let expr = binder.bind(&parsed)?;
        if binder.params != a.variables.len() {
            return Err(SqlError::unsupported(
                "'?' placeholders in LOAD DATA ... SET",
            ));
        }
        set.push(BoundSet {
            column: col,
            expr,
            variables: a.variables.clone(),
        });
    }
    let duplicates = stmt.duplicates.unwrap_or(if stmt.local {
        Duplicates::Ignore
    } else {
        Duplicates::Error
    });
    Ok(Plan {
        table,
        targets,
        set,
        duplicates,
        lenient: stmt.local || stmt.duplicates == Some(Duplicates::Ignore),
        now_micros: crate::value::now_seconds().saturating_mul(1_000_000),
    })
}

/// Checks the CHARACTER SET clause: the input must already be in the column character set.
fn check_charset(charset: Option<&str>) -> SqlResult<()> {
    match charset.map(str::to_ascii_lowercase).as_deref() {
        None | Some("utf8mb4" | "utf8" | "utf8mb3" | "binary" | "ascii" | "default") => Ok(()),
        Some(other) => Err(SqlError::unsupported(format!(
            "LOAD DATA ... CHARACTER SET {other} (input must be utf8mb4)"
        ))),
    }
}

/// Resolves the target table of `stmt` (1046 without a database, 1146 for a missing table).
pub fn target_table(
    executor: &SqlExecutor,
    current_db: Option<&str>,
    stmt: &LoadStatement,
) -> SqlResult<Arc<Table>> {
    let db = stmt
        .db
        .as_deref()
        .or(current_db)
        .ok_or(SqlError::NoDatabaseSelected)?;
    executor.catalog().snapshot().table(db, &stmt.table)
}

/// Runs a LOAD DATA statement over `source` in the session's transaction (see the module
/// documentation).
pub async fn execute<S: ChunkSource>(
    executor: &SqlExecutor,
    session: &mut SessionState,
    stmt: &LoadStatement,
    source: &mut S,
) -> SqlResult<LoadOutcome> {
    check_charset(stmt.charset.as_deref())?;
    let table = target_table(executor, session.database(), stmt)?;
    let plan = bind(stmt, table)?;
    let last_id = session.last_insert_id();
    let mut local = None;
    let txn = session.write_transaction(executor.storage(), &mut local)?;
    let result = load_rows(executor, txn, &plan, stmt, source, last_id).await;
    let result = match result {
        Ok(outcome) => match local {
            Some(t) => executor.catalog().commit_txn(t).await.map(|()| outcome),
            None => Ok(outcome),
        },
        Err(e) => Err(e),
    };
    match &result {
        Ok(o) => session.finish_write(Ok((
            u16::try_from(o.warning_count).unwrap_or(u16::MAX),
            o.first_generated,
        ))),
        Err(e) => session.finish_write(Err(e)),
    }
    result
}

async fn load_rows<S: ChunkSource>(
    executor: &SqlExecutor,
    txn: &mut Transaction,
    plan: &Plan,
    stmt: &LoadStatement,
    source: &mut S,
    last_id: u64,
) -> SqlResult<LoadOutcome> {
    let mut ctx = StmtCtx::new(txn, executor.catalog().data().clone());
    let mut reader = RecordReader::new(stmt.format.clone());
    let mut out = LoadOutcome::default();
    let mut to_skip = stmt.ignore_lines;
    let mut done = false;
    while !done {
        match source.next_chunk().await? {
            Some(chunk) => reader.push(&chunk),
            None => {
                reader.finish();
                done = true;
            }
        }
        while let Some(record) = reader.next_record() {
            if to_skip > 0 {
                to_skip -= 1;
                continue;
            }
            out.records += 1;
            if out.records % 256 == 0 {
                Interrupt::check_current()?;
            }
            load_record(&mut ctx, plan, record, last_id, &mut out).await?;
        }
    }
    Interrupt::check_current()?;
    ctx.apply().await?;
    Ok(out)
}

fn warn(out: &mut LoadOutcome, warnings: Vec<Warning>) {
    for w in warnings {
        out.warning_count += 1;
        if out.warnings.len() < MAX_KEPT_WARNINGS {
            out.warnings.push(w);
        }
    }
}

async fn load_record(
    ctx: &mut StmtCtx<'_>,
    plan: &Plan,
    record: Vec<Field>,
    last_id: u64,
    out: &mut LoadOutcome,
) -> SqlResult<()> {
    let table = &plan.table;
    let def = &table.def;
    let rowno = usize::try_from(out.records).unwrap_or(usize::MAX);
    let mut warnings = Vec::new();
    let problem = |e: SqlError, warnings: &mut Vec<Warning>| {
        if plan.lenient {
            warnings.push(Warning::from_error(&e));
            Ok(())
        } else {
            Err(e)
        }
    };
    if record.len() < plan.targets.len() {
        problem(SqlError::TooFewRecords(out.records), &mut warnings)?;
    } else if record.len() > plan.targets.len() {
        problem(SqlError::TooManyRecords(out.records), &mut warnings)?;
    }
    let mut row: Vec<Option<Datum>> = vec![None; def.columns.len()];
    let mut variables: HashMap<&str, Datum> = HashMap::new();
    let mut fields = record.into_iter();
    for target in &plan.targets {
        let value = match fields.next() {
            Some(Some(bytes)) => Datum::Bytes(bytes),
            Some(None) => Datum::Null,
            None => match target {
                Ok(_) => continue,
                Err(_) => Datum::Null,
            },
        };
        match target {
            Ok(c) => {
                let col = def
                    .columns
                    .get(*c)
                    .ok_or_else(|| SqlError::Internal("LOAD DATA target column".into()))?;
                let v = convert::convert(&value, col, rowno, plan.lenient, &mut warnings)?;
                if let Some(slot) = row.get_mut(*c) {
                    *slot = Some(v);
                }
            }
            Err(name) => {
                variables.insert(name.as_str(), value);
            }
        }
    }
    if !plan.set.is_empty() {
        let current: Vec<Datum> = row
            .iter()
            .map(|v| v.clone().unwrap_or(Datum::Null))
            .collect();
        for s in &plan.set {
            let params: Vec<Datum> = s
                .variables
                .iter()
                .map(|v| variables.get(v.as_str()).cloned().unwrap_or(Datum::Null))
                .collect();
            let mut e = s.expr.clone();
            e.bind_params(&params, last_id)?;
            let value = e.eval(&current, &[])?;
            let col = def
                .columns
                .get(s.column)
                .ok_or_else(|| SqlError::Internal("LOAD DATA SET column".into()))?;
            let v = convert::convert(&value, col, rowno, plan.lenient, &mut warnings)?;
            if let Some(slot) = row.get_mut(s.column) {
                *slot = Some(v);
            }
        }
    }
    let auto = def.auto_increment_column();
    let mut full = Vec::with_capacity(def.columns.len());
    for (i, (col, v)) in def.columns.iter().zip(row).enumerate() {
        let mut d = match v {
            Some(d) => d,
            None if Some(i) == auto => Datum::Null,
            None => match col.default_at(plan.now_micros) {
                Some(d) => d,
                None => {
                    problem(SqlError::NoDefault(col.name.clone()), &mut warnings)?;
                    convert::implicit_default(col.ty)
                        .ok_or_else(|| SqlError::NoDefault(col.name.clone()))?
                }
            },
        };
        if Some(i) == auto {
            d = crate::dml::assign_auto_increment(table, col, d, rowno, &mut out.first_generated)?;
        }
        if d.is_null() && !col.nullable {
            let e = SqlError::NullToNotNull {
                column: col.name.clone(),
                row: rowno,
            };
            let default = convert::implicit_default(col.ty);
            problem(e, &mut warnings)?;
            d = default.ok_or_else(|| SqlError::NotNull(col.name.clone()))?;
        }
        full.push(d);
    }
    let rowid = def
        .primary_key
        .is_empty()
        .then(|| table.next_auto.fetch_add(1, Ordering::SeqCst));
    let replace = plan.duplicates == Duplicates::Replace;
    match write::insert_row(ctx, table, &full, rowid, replace).await {
        Ok(deleted) => {
            out.deleted += deleted;
            out.affected += 1 + deleted;
        }
        Err(e @ SqlError::DuplicateEntry { .. }) if plan.duplicates == Duplicates::Ignore => {
            out.skipped += 1;
            warnings.push(Warning::from_error(&e));
        }
        Err(e) => return Err(e),
    }
    warn(out, warnings);
    Ok(())
}
