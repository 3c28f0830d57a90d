//! Prepared statements of a session (COM_STMT_PREPARE / EXECUTE and SQL `PREPARE` /
//! `EXECUTE`): each statement is prepared by its route (`dispatch.rs`), so that executing it
//! answers exactly as the same text would over the text protocol.
//!
//! - executor statements keep the executor's cached plan ([`Prepared::Plan`]); those with
//!   session functions or user variables are re-planned at each execution with the values of
//!   that moment, their placeholders still bound as typed values;
//! - session-state statements and routed ones (SHOW, information_schema, account statements,
//!   KILL, the process list) are answered again at each execution; only information_schema
//!   queries take placeholders;
//! - `SET @a = expr, …` evaluates its expressions as one SELECT with the placeholders bound;
//! - `USE`, `LOAD DATA` and the SQL-level commands themselves cannot be prepared (1295).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::accounts;
use crate::engine::PreparedPlan;
use crate::error::{SqlError, SqlResult};
use crate::result::StatementResult;
use crate::types::Datum;

use super::column::ColumnDef;
use super::convert;
use super::dispatch::{self, Route};
use super::frontend::FrontendSession;
use super::functions;
use super::outcome::{OkSummary, QueryOutcome, StatementId};
use super::probe::Probe;
use super::sql_prepare::{self, SqlPrepare};
use super::traits::{NoLocalInfile, SqlSession};

/// The name `dispatch::route` gives information_schema queries.
const INFORMATION_SCHEMA_QUERIES: &str = "information_schema queries";

/// A statement prepared in a session. Every kind gives the same results as the statement
/// sent over the text protocol.
pub(super) enum Prepared {
    /// Run by the executor from its cached plan.
    Plan(Box<PreparedPlan>),
    /// A statement with session functions or user variables (`SELECT CONNECTION_ID(), @a`):
    /// their values are substituted at each execution (they change between executions), the
    /// result planned again, and the placeholders bound as typed values.
    WithSessionValues(String),
    /// `SET @a = expr, …`: the expressions (with their placeholders) evaluated as one SELECT.
    UserVariables(Vec<(String, String)>),
    /// A session-state statement (no placeholders), answered again at each execution.
    SessionState(Probe),
    /// SHOW, DESCRIBE, information_schema queries, account statements, KILL and
    /// SHOW PROCESSLIST: routed again at each execution, as text. Only an information_schema
    /// query may have placeholders (their count is kept).
    Routed(String, usize),
}

impl FrontendSession {
    /// Prepares one statement by its route: the prepared form, its placeholder count and
    /// result columns. As in MySQL, `USE` and `LOAD DATA` cannot be prepared (1295).
    pub(super) async fn prepare_routed(
        &mut self,
        statement: &str,
    ) -> SqlResult<(Prepared, usize, Vec<ColumnDef>)> {
        if sql_prepare::recognize(statement).is_some() {
            return Err(SqlError::UnsupportedInPreparedStatement);
        }
        if let Some(assignments) = functions::parse_user_variable_set(statement) {
            let assignments = assignments?;
            let select = user_variable_select(&assignments);
            let rewritten = functions::rewrite(&select, &self.session_values())?;
            let plan = self
                .executor
                .prepare(&self.state, rewritten.as_deref().unwrap_or(&select))
                .await?;
            let count = plan.param_count();
            return Ok((Prepared::UserVariables(assignments), count, Vec::new()));
        }
        Ok(match dispatch::route(statement) {
            Route::Executor => {
                let rewritten = functions::rewrite(statement, &self.session_values())?;
                let plan = self
                    .executor
                    .prepare(&self.state, rewritten.as_deref().unwrap_or(statement))
                    .await?;
                let count = plan.param_count();
                let columns = plan.columns().iter().map(convert::output_column).collect();
                let prepared = match rewritten {
                    Some(_) => Prepared::WithSessionValues(statement.to_owned()),
                    None => Prepared::Plan(Box::new(plan)),
                };
                (prepared, count, columns)
            }
            Route::SessionState(Probe::Use(_)) | Route::LoadData => {
                return Err(SqlError::UnsupportedInPreparedStatement);
            }
            Route::SessionState(probe) => {
                reject_placeholders(statement)?;
                let columns = match &probe {
                    Probe::Select { items, limit } => match self.select(items, *limit)? {
                        QueryOutcome::Rows(rs) => rs.columns,
                        QueryOutcome::Done(_) => Vec::new(),
                    },
                    Probe::ShowWarnings
                    | Probe::ShowVariables { .. }
                    | Probe::ShowStatus { .. } => match self.answer(probe.clone()).await? {
                        QueryOutcome::Rows(rs) => rs.columns,
                        QueryOutcome::Done(_) => Vec::new(),
                    },
                    _ => Vec::new(),
                };
                (Prepared::SessionState(probe), 0, columns)
            }
            Route::Show(name) if name == INFORMATION_SCHEMA_QUERIES => {
                let count = dispatch::placeholder_count(statement);
                let nulls = vec![Datum::Null; count];
                let result = dispatch::show_statement(
                    &self.executor,
                    &self.session_values(),
                    statement,
                    &name,
                    &nulls,
                )?;
                let columns = match self.outcome(result) {
                    QueryOutcome::Rows(rs) => rs.columns,
                    QueryOutcome::Done(_) => Vec::new(),
                };
                (
                    Prepared::Routed(statement.to_owned(), count),
                    count,
                    columns,
                )
            }
            route @ (Route::Show(_) | Route::Accounts(_) | Route::Kill | Route::ProcessList(_)) => {
                reject_placeholders(statement)?;
                let columns = self.describe_routed(statement, route).await?;
                (Prepared::Routed(statement.to_owned(), 0), 0, columns)
            }
        })
    }

    /// Result columns of a routed statement at PREPARE: the read-only ones (SHOW, DESCRIBE,
    /// information_schema, SHOW GRANTS, the process list) are run once for them; the others
    /// return no rows.
    async fn describe_routed(
        &mut self,
        statement: &str,
        route: Route,
    ) -> SqlResult<Vec<ColumnDef>> {
        let outcome = match route {
            Route::Show(name) => {
                let result = self.show(statement, &name)?;
                self.outcome(result)
            }
            Route::Accounts(name) if name == "SHOW GRANTS" => self.outcome(
                accounts::account_statement(
                    &self.accounts,
                    &self.context.user,
                    &self.context.host,
                    statement,
                    &name,
                )
                .await?,
            ),
            Route::ProcessList(full) => self.show_processlist(full),
            _ => return Ok(Vec::new()),
        };
        Ok(match outcome {
            QueryOutcome::Rows(rs) => rs.columns,
            QueryOutcome::Done(_) => Vec::new(),
        })
    }

    /// Runs a prepared executor statement: from its cached plan (`id`), or — for one with
    /// session values — from `text` with the current values substituted.
    async fn execute_prepared_plan(
        &mut self,
        id: Option<StatementId>,
        text: &str,
        params: &[Datum],
    ) -> SqlResult<StatementResult> {
        let Some(id) = id else {
            // Boxed: planning's future and the plan are large and this path rare; unboxed,
            // they would be part of (and copied with) every execution's future.
            return Box::pin(self.execute_with_session_values(text, params)).await;
        };
        let Some(Prepared::Plan(plan)) = self.prepared.get(&id) else {
            return Err(SqlError::Internal("prepared plan vanished".into()));
        };
        self.executor
            .execute_prepared(&mut self.state, plan, params)
            .await
    }

    /// Plans and runs `text` with the current session values substituted.
    async fn execute_with_session_values(
        &mut self,
        text: &str,
        params: &[Datum],
    ) -> SqlResult<StatementResult> {
        let rewritten = functions::rewrite(text, &self.session_values())?;
        let plan = self
            .executor
            .prepare(&self.state, rewritten.as_deref().unwrap_or(text))
            .await?;
        self.executor
            .execute_prepared(&mut self.state, &plan, params)
            .await
    }

    /// Counts a statement (`Questions`) and, unless it is `SHOW WARNINGS`, forgets the previous
    /// statement's warnings.
    fn start_question(&mut self, clears_warnings: bool) {
        self.questions += 1;
        self.counters.questions.fetch_add(1, Ordering::Relaxed);
        if clears_warnings {
            self.warnings.clear();
        }
    }

    /// Executes prepared statement `id` with typed parameters (COM_STMT_EXECUTE and SQL
    /// `EXECUTE`); each kind of [`Prepared`] answers as its text would.
    pub(super) async fn execute_with(
        &mut self,
        id: StatementId,
        params: Vec<Datum>,
    ) -> SqlResult<QueryOutcome> {
        let prepared = self.prepared.get(&id).ok_or(SqlError::UnknownStatement {
            id,
            command: "mysqld_stmt_execute",
        })?;
        let no_params = |params: &[Datum]| {
            if params.is_empty() {
                Ok(())
            } else {
                Err(SqlError::WrongArguments("mysqld_stmt_execute".into()))
            }
        };
        let (text, plan) = match prepared {
            Prepared::Routed(text, count) => {
                if params.len() != *count {
                    return Err(SqlError::WrongArguments("mysqld_stmt_execute".into()));
                }
                let text = text.clone();
                if params.is_empty() {
                    // Boxed: the text path's future is large, and an unboxed one would be
                    // part of (and copied with) every execution's future.
                    return Box::pin(self.run(&text, &mut NoLocalInfile)).await;
                }
                self.start_question(true);
                let result = dispatch::show_statement(
                    &self.executor,
                    &self.session_values(),
                    &text,
                    INFORMATION_SCHEMA_QUERIES,
                    &params,
                )?;
                let outcome = self.outcome(result);
                self.record_counts(&outcome);
                return Ok(outcome);
            }
            Prepared::SessionState(probe) => {
                no_params(&params)?;
                let probe = probe.clone();
                self.start_question(probe != Probe::ShowWarnings);
                let outcome = self.answer(probe).await?;
                self.record_counts(&outcome);
                return Ok(outcome);
            }
            Prepared::UserVariables(assignments) => {
                let assignments = assignments.clone();
                self.start_question(true);
                let outcome = Box::pin(self.set_user_variables(&assignments, &params)).await?;
                self.record_counts(&outcome);
                return Ok(outcome);
            }
            Prepared::WithSessionValues(text) => (text.clone(), None),
            Prepared::Plan(_) => (String::new(), Some(id)),
        };
        self.start_question(true);
        let process = Arc::clone(&self.process);
        let shown = if text.is_empty() {
            "(prepared statement)"
        } else {
            text.as_str()
        };
        process.begin_statement(shown, self.state.database());
        let interrupt = process.interrupt.clone();
        let result = interrupt
            .scope(self.execute_prepared_plan(plan, &text, &params))
            .await;
        process.end_statement(self.state.database());
        let outcome = self.outcome(result?);
        self.record_counts(&outcome);
        Ok(outcome)
    }

    /// SQL-level `PREPARE` / `EXECUTE` / `DEALLOCATE PREPARE` (see `sql_prepare.rs`).
    pub(super) async fn sql_prepare(&mut self, command: SqlPrepare) -> SqlResult<QueryOutcome> {
        match command {
            SqlPrepare::Prepare { name, source } => {
                let text = match source {
                    sql_prepare::Source::Text(t) => t,
                    sql_prepare::Source::Variable(v) => match self.user_variables.get(&v) {
                        Some(d) if !matches!(d, Datum::Null) => crate::value::display(d),
                        _ => {
                            return Err(SqlError::Syntax {
                                near: "NULL".into(),
                                line: 1,
                            });
                        }
                    },
                };
                if let Some((old, _)) = self.named_statements.remove(&name) {
                    self.prepared.remove(&old);
                }
                let prepared = SqlSession::prepare(self, &text).await?;
                self.named_statements
                    .insert(name, (prepared.id, usize::from(prepared.param_count)));
                Ok(QueryOutcome::Done(OkSummary {
                    info: "Statement prepared".into(),
                    ..OkSummary::default()
                }))
            }
            SqlPrepare::Execute { name, using } => {
                let (id, count) =
                    *self
                        .named_statements
                        .get(&name)
                        .ok_or(SqlError::UnknownStatementName {
                            name,
                            command: "EXECUTE",
                        })?;
                if using.len() != count {
                    return Err(SqlError::WrongArguments("EXECUTE".into()));
                }
                let params = using
                    .iter()
                    .map(|v| self.user_variables.get(v).cloned().unwrap_or(Datum::Null))
                    .collect();
                self.execute_with(id, params).await
            }
            SqlPrepare::Deallocate { name } => {
                let (id, _) =
                    self.named_statements
                        .remove(&name)
                        .ok_or(SqlError::UnknownStatementName {
                            name,
                            command: "DEALLOCATE PREPARE",
                        })?;
                self.prepared.remove(&id);
                Ok(QueryOutcome::Done(OkSummary::default()))
            }
        }
    }
}

/// `SELECT e1, e2, …` of a user-variable assignment's expressions.
pub(super) fn user_variable_select(assignments: &[(String, String)]) -> String {
    let exprs: Vec<&str> = assignments.iter().map(|(_, e)| e.as_str()).collect();
    format!("SELECT {}", exprs.join(", "))
}

/// 1064 for a placeholder in a statement that takes none (SHOW, account statements, `SET`
/// of a system variable, …), quoting the text from the placeholder as MySQL does.
fn reject_placeholders(statement: &str) -> SqlResult<()> {
    if dispatch::placeholder_count(statement) == 0 {
        return Ok(());
    }
    let near = statement
        .find('?')
        .and_then(|i| statement.get(i..))
        .unwrap_or_default();
    Err(SqlError::Syntax {
        near: near.chars().take(80).collect(),
        line: 1,
    })
}
