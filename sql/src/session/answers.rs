//! Answers to session-state statements (recognized by `probe.rs`): values come from the
//! session's typed variable store, its context (user, connection id) and the executor's state
//! (current database, LAST_INSERT_ID, autocommit); nothing here is a canned answer.
//!
//! Invariants: a `SET` validates every assignment before applying any, so a failing `SET`
//! changes nothing; `SET autocommit` drives the executor's autocommit (switching it on commits
//! the open transaction, as in MySQL) before the variable is stored, so the two never differ.

use std::sync::atomic::Ordering;

use crate::accounts;
use crate::error::{SqlError, SqlResult};
use crate::value;

use super::column::{ColumnDef, ColumnFlags, ColumnType};
use super::frontend::FrontendSession;
use super::outcome::{OkSummary, QueryOutcome, ResultSet};
use super::probe::{Assignment, Probe, ProbeExpr, ProbeItem};
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
                isolation,
                read_only,
            } => {
                if read_only == Some(true) {
                    return Err(SqlError::NotSupported("SET TRANSACTION READ ONLY".into()));
                }
                if let Some(level) = isolation {
                    let (key, value) = self
                        .variables
                        .validate("transaction_isolation", Some(&level))?;
                    self.variables.apply(&key, value)?;
                }
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
            Probe::ShowVariables { like } => {
                let rows = self
                    .variables
                    .iter()
                    .map(|(name, v)| (name.to_owned(), variable_text(v)))
                    .collect();
                Ok(name_value_rows("Variable_name", rows, like.as_deref()))
            }
            Probe::ShowStatus { global, like } => {
                let questions = if global {
                    self.counters.questions.load(Ordering::Relaxed)
                } else {
                    self.questions
                };
                let rows = vec![
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

    async fn set(&mut self, assignments: &[Assignment]) -> SqlResult<QueryOutcome> {
        let validated = assignments
            .iter()
            .map(|a| self.variables.validate(&a.name, a.value.as_deref()))
            .collect::<SqlResult<Vec<_>>>()?;
        if let Some((_, v)) = validated.iter().rev().find(|(k, _)| k == "autocommit") {
            self.state
                .set_autocommit(
                    matches!(v, VariableValue::Int(i) if *i != 0),
                    self.executor.catalog(),
                )
                .await?;
        }
        for (key, value) in validated {
            self.variables.apply(&key, value)?;
        }
        self.state
            .set_execution_mode(self.variables.execution_mode());
        Ok(done())
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
            self.variables.apply(&key, value)?;
        }
        self.state
            .set_execution_mode(self.variables.execution_mode());
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
            ProbeExpr::SystemVariable(name) => match self.variables.get(name)? {
                VariableValue::Int(v) => (ColumnType::LongLong, Value::Int(*v)),
                VariableValue::Text(t) => (ColumnType::VarChar, Value::text(t.clone())),
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
                VariableValue::Text(t) => (ColumnType::VarChar, Value::text(t.clone())),
                other => return Err(SqlError::Internal(format!("@@version is {other:?}"))),
            },
            ProbeExpr::Integer(i) => (ColumnType::LongLong, Value::Int(*i)),
            ProbeExpr::Text(t) => (ColumnType::VarChar, Value::text(t.clone())),
        })
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
