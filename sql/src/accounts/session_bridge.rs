//! Glue for the bootstrap engine, whose session boundary has its own error type: the account
//! statements and database checks of `login.rs`, with results and errors in the boundary's
//! types. (Once the crate has one `SqlError`, a dispatcher calls `login.rs` directly.)
//!
//! Invariant: errors keep their MySQL code, SQLSTATE and message (wrapped in
//! `session::SqlError::Engine`).

use super::login::{account_statement, database_access};
use super::parse::recognize;
use super::store::AccountStore;
use crate::result::StatementResult;
use crate::session::{
    ColumnDef, ColumnType, OkSummary, QueryOutcome, ResultSet, SqlError, SqlResult, Value,
};
use crate::types::Datum;

/// Runs `sql` if it is an account statement, as `user` connected from `host`; `None` if the
/// text is not one.
pub async fn run_for_session(
    store: &AccountStore,
    user: &str,
    host: &str,
    sql: &str,
) -> Option<SqlResult<QueryOutcome>> {
    // Parsed again by `account_statement`; account statements are rare and short.
    recognize(sql)?.ok();
    let result = account_statement(store, user, host, sql, "account statement").await;
    Some(result.map_err(SqlError::Engine).and_then(outcome))
}

/// 1044 unless `user` connected from `host` may use database `db`.
pub fn check_database_for_session(
    store: &AccountStore,
    user: &str,
    host: &str,
    db: &str,
) -> SqlResult<()> {
    database_access(store, user, host, db).map_err(SqlError::Engine)
}

fn outcome(result: StatementResult) -> SqlResult<QueryOutcome> {
    Ok(match result {
        StatementResult::Affected { .. } => QueryOutcome::Done(OkSummary::default()),
        StatementResult::Rows { columns, rows } => QueryOutcome::Rows(ResultSet {
            columns: columns
                .into_iter()
                .map(|c| ColumnDef::new(c.name, ColumnType::VarChar).with_length(4096))
                .collect(),
            rows: rows
                .into_iter()
                .map(|row| {
                    row.into_iter()
                        .map(|d| match d {
                            Datum::Bytes(b) => Ok(Value::text(String::from_utf8_lossy(&b))),
                            Datum::Null => Ok(Value::Null),
                            other => Err(SqlError::Internal(format!(
                                "account statement returned {other:?}"
                            ))),
                        })
                        .collect::<SqlResult<Vec<_>>>()
                })
                .collect::<SqlResult<Vec<_>>>()?,
            warnings: 0,
        }),
    })
}
