//! `KILL [CONNECTION | QUERY] id`, `SHOW [FULL] PROCESSLIST` and `SHOW WARNINGS`, answered from
//! the server's process list (`processlist.rs`) and the session's last warnings.
//!
//! Invariants: KILL's argument must be a non-negative integer literal (anything else is 1064,
//! except expressions, 1235 naming them); a user without the global privileges sees and kills
//! only sessions of the same user name (MySQL's PROCESS / CONNECTION_ADMIN rule).

use datafusion::sql::sqlparser::ast::Statement;

use crate::accounts;
use crate::error::{SqlError, SqlResult};
use crate::result::StatementResult;
use crate::sql_text::{Token, tokenize};
use crate::types::Datum;
use crate::{information_schema, plan};

use super::column::{ColumnDef, ColumnFlags, ColumnType};
use super::dispatch;
use super::frontend::{FrontendSession, mentions_processlist};
use super::outcome::{OkSummary, QueryOutcome, ResultSet};
use super::value::Value;

/// A parsed KILL statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Kill {
    pub id: u64,
    pub connection: bool,
}

/// Parses `KILL [CONNECTION | QUERY] id`.
pub(super) fn parse_kill(statement: &str) -> SqlResult<Kill> {
    let tokens = tokenize(statement);
    let syntax = || SqlError::Syntax {
        near: statement.trim().chars().take(80).collect(),
        line: 1,
    };
    let mut rest = tokens.as_slice();
    match rest.first() {
        Some(Token::Word(w)) if w.eq_ignore_ascii_case("KILL") => {
            rest = rest.get(1..).unwrap_or_default()
        }
        _ => return Err(syntax()),
    }
    let mut connection = true;
    if let Some(Token::Word(w)) = rest.first() {
        if w.eq_ignore_ascii_case("QUERY") {
            connection = false;
            rest = rest.get(1..).unwrap_or_default();
        } else if w.eq_ignore_ascii_case("CONNECTION") {
            rest = rest.get(1..).unwrap_or_default();
        }
    }
    match rest {
        [Token::Number(n)] => n
            .parse()
            .map(|id| Kill { id, connection })
            .map_err(|_| syntax()),
        [] => Err(syntax()),
        _ => Err(SqlError::unsupported(
            "KILL with an expression (give the id as a number)",
        )),
    }
}

fn text(s: &str) -> Value {
    Value::Bytes(s.as_bytes().to_vec())
}

impl FrontendSession {
    fn is_admin(&self) -> bool {
        accounts::has_global_privileges(&self.accounts, &self.context.user, &self.context.host)
    }

    /// Runs a KILL statement.
    pub(super) fn kill(&self, statement: &str) -> SqlResult<QueryOutcome> {
        let kill = parse_kill(statement)?;
        let admin = self.is_admin();
        self.processes
            .kill(kill.id, kill.connection, &self.context.user, admin)?;
        Ok(QueryOutcome::Done(OkSummary::default()))
    }

    /// `SHOW [FULL] PROCESSLIST`.
    pub(super) fn show_processlist(&self, full: bool) -> QueryOutcome {
        let rows = self
            .processes
            .rows(&self.context.user, self.is_admin(), full)
            .into_iter()
            .map(|r| {
                vec![
                    Value::UInt(u64::from(r.id)),
                    text(&r.user),
                    text(&r.host),
                    r.db.as_deref().map_or(Value::Null, text),
                    text(r.command),
                    Value::Int(i64::try_from(r.time).unwrap_or(i64::MAX)),
                    text(r.state),
                    r.info.as_deref().map_or(Value::Null, text),
                ]
            })
            .collect();
        let varchar = |name: &str, chars: u32| {
            ColumnDef::new(name, ColumnType::VarChar).with_length(chars * 4)
        };
        QueryOutcome::Rows(ResultSet {
            columns: vec![
                ColumnDef::new("Id", ColumnType::LongLong)
                    .with_flags(ColumnFlags::UNSIGNED.with(ColumnFlags::NOT_NULL))
                    .with_length(21),
                varchar("User", 32),
                varchar("Host", 261),
                varchar("db", 64),
                varchar("Command", 16),
                ColumnDef::new("Time", ColumnType::Long).with_length(7),
                varchar("State", 30),
                varchar("Info", if full { 65_535 } else { 100 }),
            ],
            rows,
            warnings: 0,
        })
    }

    /// Answers a SHOW statement (text and prepared alike): the process list from the registry,
    /// everything else from the catalog.
    pub(super) fn show(&self, statement: &str, name: &str) -> SqlResult<StatementResult> {
        if mentions_processlist(statement)
            && let Some(result) = self.processlist_view(statement)?
        {
            return Ok(result);
        }
        dispatch::show_statement(&self.executor, &self.session_values(), statement, name, &[])
    }

    /// A SELECT over `information_schema.PROCESSLIST`, with the rows this user may see; `None`
    /// if the statement reads another view (the caller answers it from the catalog).
    pub(super) fn processlist_view(&self, statement: &str) -> SqlResult<Option<StatementResult>> {
        let parsed = plan::parse(statement)?;
        let [Statement::Query(q)] = parsed.as_slice() else {
            return Ok(None);
        };
        let bytes = |s: &str| Datum::Bytes(s.as_bytes().to_vec());
        let rows = self
            .processes
            .rows(&self.context.user, self.is_admin(), true)
            .into_iter()
            .map(|r| {
                vec![
                    Datum::UInt(u64::from(r.id)),
                    bytes(&r.user),
                    bytes(&r.host),
                    r.db.as_deref().map_or(Datum::Null, bytes),
                    bytes(r.command),
                    Datum::Int(i64::try_from(r.time).unwrap_or(i64::MAX)),
                    bytes(r.state),
                    r.info.as_deref().map_or(Datum::Null, bytes),
                ]
            })
            .collect();
        let snap = self.executor.catalog().snapshot();
        information_schema::execute_query_with(&snap, self.state.database(), q, &[], Some(rows))
            .transpose()
    }

    /// `SHOW WARNINGS`: the conditions of the last statement that raised any.
    pub(super) fn show_warnings(&self) -> QueryOutcome {
        QueryOutcome::Rows(ResultSet {
            columns: vec![
                ColumnDef::new("Level", ColumnType::VarChar).with_length(28),
                ColumnDef::new("Code", ColumnType::Long)
                    .with_flags(ColumnFlags::UNSIGNED.with(ColumnFlags::NOT_NULL))
                    .with_length(4),
                ColumnDef::new("Message", ColumnType::VarChar).with_length(2048),
            ],
            rows: self
                .warnings
                .iter()
                .map(|w| {
                    vec![
                        text(w.level),
                        Value::UInt(u64::from(w.code)),
                        text(&w.message),
                    ]
                })
                .collect(),
            warnings: 0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kill_forms() {
        assert_eq!(
            parse_kill("KILL 5").unwrap(),
            Kill {
                id: 5,
                connection: true
            }
        );
        assert_eq!(
            parse_kill("kill query 12").unwrap(),
            Kill {
                id: 12,
                connection: false
            }
        );
        assert_eq!(
            parse_kill("KILL CONNECTION 3").unwrap(),
            Kill {
                id: 3,
                connection: true
            }
        );
        assert_eq!(parse_kill("KILL").unwrap_err().code(), 1064);
        assert_eq!(parse_kill("KILL QUERY x y").unwrap_err().code(), 1235);
    }
}
