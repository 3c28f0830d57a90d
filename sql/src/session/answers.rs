//! Answers to session-state statements (recognized by `probe.rs`): values come from the
//! session's typed variable store, its context (user, connection id) and the executor's state
//! (current database, LAST_INSERT_ID, autocommit); nothing here is a canned answer.
//!
//! Invariants: a `SET` validates every assignment before applying any, so a failing `SET`
//! changes nothing; `SET autocommit` drives the executor's autocommit (switching it on commits
//! the open transaction, as in MySQL) before the variable is stored, so the two never differ;
//! the variables the executor honours (transaction characteristics, lock wait timeout,
//! execution mode) are pushed into its session state after every change (`sync_state`).
//! `SET GLOBAL` needs the administrator privilege (MySQL's SUPER / SYSTEM_VARIABLES_ADMIN).

use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::accounts;
use crate::engine::{Isolation, TxnCharacteristics};
use crate::error::{SqlError, SqlResult};
use crate::value;

use super::column::{ColumnDef, ColumnFlags, ColumnType};
use super::frontend::FrontendSession;
use super::outcome::{OkSummary, QueryOutcome, ResultSet};
use super::probe::{Assignment, Probe, ProbeExpr, ProbeItem, Scope};
use super::value::Value;
use super::variables::VariableValue;

/// Display width MySQL gives `Variable_name` (VARCHAR(64)) and `Value` (VARCHAR(1024)).
const NAME_CHARS: u32 = 64;
const VALUE_CHARS: u32 = 1024;

impl FrontendSession {
    /// Answers one session-state statement.
    pub(super) async fn answer(&mut self, probe: Probe) -> SqlResult<QueryOutcome> {
        match probe {
            Probe::Select { items, limit } => self.select(&items, limit),
            Probe::Set(assignments) => self.set(&assignments).await,
            Probe::SetNames { charset, collation } => {
                self.set_names(&charset, collation.as_deref())
            }
            Probe::SetTransaction {
                scope,
                isolation,
                read_only,
            } => {
                let mut assignments = Vec::new();
                if let Some(level) = isolation {
                    assignments.push(("transaction_isolation", level));
                }
                if let Some(ro) = read_only {
                    assignments.push(("transaction_read_only", u8::from(ro).to_string()));
                }
                let assignments: Vec<Assignment> = assignments
                    .into_iter()
                    .map(|(name, value)| Assignment {
                        name: name.to_owned(),
                        value: Some(value),
                        scope,
                        bare: scope == Scope::Default,
                    })
                    .collect();
                self.set(&assignments).await
            }
            Probe::StartTransaction { read_only } => {
                let characteristics = TxnCharacteristics {
                    isolation: None,
                    read_only,
                };
                self.executor
                    .begin(&mut self.state, characteristics)
                    .await?;
                Ok(done())
            }
            Probe::Use(db) => {
                accounts::database_access(
                    &self.accounts,
                    &self.context.user,
                    &self.context.host,
                    &db,
                )?;
                self.executor.use_database(&mut self.state, &db)?;
                Ok(done())
            }
            Probe::ShowWarnings => Ok(self.show_warnings()),
            Probe::ShowVariables { global, like } => {
                let values = if global {
                    self.variables.globals().snapshot()
                } else {
                    self.variables.snapshot()
                };
                let rows = values
                    .into_iter()
                    .map(|(name, v)| (name.to_owned(), variable_text(&v)))
                    .collect();
                Ok(name_value_rows("Variable_name", rows, like.as_deref()))
            }
            Probe::ShowStatus { global, like } => {
                let questions = if global {
                    self.counters.questions.load(Ordering::Relaxed)
                } else {
                    self.questions
                };
                let admission = self.executor.admission();
                let rows = vec![
                    (
                        "Orcinus_transaction_admission_revocations".to_owned(),
                        admission.revocations().to_string(),
                    ),
                    (
                        "Orcinus_transaction_admission_waits".to_owned(),
                        admission.waits().to_string(),
                    ),
                    ("Questions".to_owned(), questions.to_string()),
                    (
                        "Threads_connected".to_owned(),
                        self.counters.sessions.load(Ordering::Relaxed).to_string(),
                    ),
                    (
                        "Uptime".to_owned(),
                        self.counters.started.elapsed().as_secs().to_string(),
                    ),
                ];
                Ok(name_value_rows("Variable_name", rows, like.as_deref()))
            }
        }
    }

    /// `SET [GLOBAL|SESSION] name = value, …` (also what `SET TRANSACTION` becomes).
    async fn set(&mut self, assignments: &[Assignment]) -> SqlResult<QueryOutcome> {
        let mut session = Vec::new();
        let mut global = Vec::new();
        let mut next = TxnCharacteristics::default();
        let mut has_next = false;
        for a in assignments {
            if a.scope == Scope::Global {
                if !accounts::has_global_privileges(
                    &self.accounts,
                    &self.context.user,
                    &self.context.host,
                ) {
                    return Err(SqlError::SpecificAccessDenied(
                        "SUPER or SYSTEM_VARIABLES_ADMIN",
                    ));
                }
                global.push(
                    self.variables
                        .globals()
                        .validate(&a.name, a.value.as_deref())?,
                );
                continue;
            }
            let (key, value) = self.variables.validate(&a.name, a.value.as_deref())?;
            match key {
                // `SET @@transaction_isolation` (and `SET TRANSACTION`) sets the next
                // transaction only.
                "transaction_isolation" if a.bare => {
                    next.isolation = Some(isolation_of(&value));
                    has_next = true;
                }
                "transaction_read_only" if a.bare => {
                    next.read_only = Some(value != VariableValue::Int(0));
                    has_next = true;
                }
                _ => session.push((key, value)),
            }
        }
        if has_next && self.state.in_transaction() {
            return Err(SqlError::TransactionInProgress);
        }
        if let Some((_, v)) = session.iter().rev().find(|(k, _)| *k == "autocommit") {
            self.state
                .set_autocommit(
                    matches!(v, VariableValue::Int(i) if *i != 0),
                    self.executor.catalog(),
                )
                .await?;
        }
        for (key, value) in session {
            self.variables.apply(key, value);
        }
        let globals = std::sync::Arc::clone(self.variables.globals());
        for (key, value) in global {
            globals.apply(key, value);
        }
        if has_next {
            self.state.set_next_transaction(next)?;
        }
        self.sync_state();
        Ok(done())
    }

    /// Pushes the variables the executor honours into its session state.
    pub(super) fn sync_state(&mut self) {
        self.state
            .set_execution_mode(self.variables.execution_mode());
        let isolation = self
            .variables
            .get("transaction_isolation")
            .map_or(Isolation::RepeatableRead, |v| isolation_of(&v));
        let read_only = self
            .variables
            .get_int("transaction_read_only")
            .is_some_and(|v| v != 0);
        self.state.set_session_characteristics(isolation, read_only);
        let secs = |name: &str, current: Duration| {
            self.variables
                .get_int(name)
                .and_then(|v| u64::try_from(v).ok())
                .map_or(current, Duration::from_secs)
        };
        self.timeouts.idle = secs("wait_timeout", self.timeouts.idle);
        self.timeouts.net_read = secs("net_read_timeout", self.timeouts.net_read);
        self.timeouts.net_write = secs("net_write_timeout", self.timeouts.net_write);
        if let Some(secs) = self.variables.get_int("innodb_lock_wait_timeout") {
            self.state
                .set_lock_wait_timeout(Duration::from_secs(u64::try_from(secs).unwrap_or(1)));
        }
    }

    fn set_names(&mut self, charset: &str, collation: Option<&str>) -> SqlResult<QueryOutcome> {
        let mut validated = Vec::new();
        for name in [
            "character_set_client",
            "character_set_connection",
            "character_set_results",
        ] {
            validated.push(self.variables.validate(name, Some(charset))?);
        }
        let collation = collation.unwrap_or("utf8mb4_0900_ai_ci");
        validated.push(
            self.variables
                .validate("collation_connection", Some(collation))?,
        );
        for (key, value) in validated {
            self.variables.apply(key, value);
        }
        self.sync_state();
        Ok(done())
    }

    pub(super) fn select(
        &self,
        items: &[ProbeItem],
        limit: Option<u64>,
    ) -> SqlResult<QueryOutcome> {
        let mut columns = Vec::with_capacity(items.len());
        let mut row = Vec::with_capacity(items.len());
        for item in items {
            let (column_type, value) = self.evaluate(&item.expr)?;
            let mut column = ColumnDef::new(item.name.clone(), column_type);
            if !value.is_null() {
                column = column.with_flags(ColumnFlags::NOT_NULL);
            }
            columns.push(column);
            row.push(value);
        }
        let rows = if limit == Some(0) {
            Vec::new()
        } else {
            vec![row]
        };
        Ok(QueryOutcome::Rows(ResultSet {
            columns,
            rows,
            warnings: 0,
        }))
    }

    fn evaluate(&self, expr: &ProbeExpr) -> SqlResult<(ColumnType, Value)> {
        Ok(match expr {
            ProbeExpr::SystemVariable(name, scope) => match scope.read(&self.variables, name)? {
                VariableValue::Int(v) => (ColumnType::LongLong, Value::Int(v)),
                VariableValue::Text(t) => (ColumnType::VarChar, Value::text(t)),
                VariableValue::Null => (ColumnType::VarChar, Value::Null),
            },
            ProbeExpr::Database => (
                ColumnType::VarChar,
                self.state.database().map_or(Value::Null, Value::text),
            ),
            ProbeExpr::User => (
                ColumnType::VarChar,
                Value::text(format!("{}@{}", self.context.user, self.context.host)),
            ),
            ProbeExpr::CurrentUser => (
                ColumnType::VarChar,
                Value::text(format!("{}@%", self.context.user)),
            ),
            ProbeExpr::ConnectionId => (
                ColumnType::LongLong,
                Value::UInt(u64::from(self.context.connection_id)),
            ),
            ProbeExpr::LastInsertId => (
                ColumnType::LongLong,
                Value::UInt(self.state.last_insert_id()),
            ),
            ProbeExpr::Version => match self.variables.get("version")? {
                VariableValue::Text(t) => (ColumnType::VarChar, Value::text(t)),
                other => return Err(SqlError::Internal(format!("@@version is {other:?}"))),
            },
            ProbeExpr::Integer(i) => (ColumnType::LongLong, Value::Int(*i)),
            ProbeExpr::Text(t) => (ColumnType::VarChar, Value::text(t.clone())),
        })
    }
}

/// The executor's isolation level for a value of `transaction_isolation` (READ UNCOMMITTED
/// runs as READ COMMITTED; SERIALIZABLE never validates).
fn isolation_of(value: &VariableValue) -> Isolation {
    match value {
        VariableValue::Text(t) if t == "READ-COMMITTED" || t == "READ-UNCOMMITTED" => {
            Isolation::ReadCommitted
        }
        _ => Isolation::RepeatableRead,
    }
}

fn done() -> QueryOutcome {
    QueryOutcome::Done(OkSummary::default())
}

/// A variable's value as SHOW VARIABLES prints it (NULL as an empty string, as MySQL does).
fn variable_text(v: &VariableValue) -> String {
    match v {
        VariableValue::Int(i) => i.to_string(),
        VariableValue::Text(t) => t.clone(),
        VariableValue::Null => String::new(),
    }
}

/// A two-column `Variable_name` / `Value` result filtered by a LIKE pattern.
fn name_value_rows(
    name_column: &str,
    rows: Vec<(String, String)>,
    like: Option<&str>,
) -> QueryOutcome {
    let text_column = |name: &str, chars: u32| {
        ColumnDef::new(name, ColumnType::VarChar)
            .with_length(chars * super::column::UTF8MB4_MAX_BYTES_PER_CHAR)
    };
    QueryOutcome::Rows(ResultSet {
        columns: vec![
            text_column(name_column, NAME_CHARS).with_flags(ColumnFlags::NOT_NULL),
            text_column("Value", VALUE_CHARS),
        ],
        rows: rows
            .into_iter()
            .filter(|(name, _)| {
                like.is_none_or(|p| value::like(name.as_bytes(), p.as_bytes(), b'\\'))
            })
            .map(|(name, v)| vec![Value::text(name), Value::text(v)])
            .collect(),
        warnings: 0,
    })
}
