//! The account table behind the session boundary (`crate::session`): account statements and
//! database-access checks for a session that knows its user and client host as text, with
//! results and errors in the boundary's types.
//!
//! Invariant: errors keep their MySQL code, SQLSTATE and message (wrapped in
//! `session::SqlError::Engine`); an unparseable client host is an internal error, never a
//! silent loopback.

use super::execute::{Invoker, execute_sql};
use super::store::AccountStore;
use crate::result::StatementResult;
use crate::session::{
    ColumnDef, ColumnType, OkSummary, QueryOutcome, ResultSet, SqlError, SqlResult, Value,
};
use crate::types::Datum;
use std::net::IpAddr;

fn client_ip(host: &str) -> SqlResult<IpAddr> {
    host.parse()
        .map_err(|_| SqlError::Internal(format!("session host '{host}' is not an IP address")))
}

/// Runs `sql` if it is an account statement, as `user` connected from `host`; `None` if the
/// text is not one.
pub async fn run_for_session(
    store: &AccountStore,
    user: &str,
    host: &str,
    sql: &str,
) -> Option<SqlResult<QueryOutcome>> {
    let client = match client_ip(host) {
        Ok(ip) => ip,
        Err(e) => return super::parse::recognize(sql).map(|_| Err(e)),
    };
    let result = execute_sql(store, Invoker { user, client }, sql).await?;
    Some(result.map_err(SqlError::Engine).and_then(outcome))
}

/// 1044 unless `user` connected from `host` may use database `db`.
pub fn check_database_for_session(
    store: &AccountStore,
    user: &str,
    host: &str,
    db: &str,
) -> SqlResult<()> {
    store
        .check_database_access(user, client_ip(host)?, db)
        .map_err(SqlError::Engine)
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
