//! [`SqlFrontend`] and [`FrontendSession`]: the SQL engine the server serves, implementing the
//! boundary traits [`SqlEngine`] and [`SqlSession`] over the statement executor
//! ([`SqlExecutor`] with one [`SessionState`] per connection) plus each session's typed variable
//! store.
//!
//! Invariants:
//! - every statement is routed once, by `dispatch::route`;
//! - the status flags come from the executor's real state (autocommit, open transaction), and
//!   `@@autocommit` in the variable store always equals the executor's autocommit;
//! - a prepared statement answers as its text would (`prepared.rs` says how); ids are unique
//!   within the session and never 0;
//! - new sessions start from the server's global variables (`SET GLOBAL`), and the executor's
//!   session state follows the variable store (`answers::sync_state`);
//! - closing or resetting a session rolls back its open transaction.

use crate::admission::{DEFAULT_IDLE_REVOKE, TxnGate};
use crate::analytics::AnalyticsConfig;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use crate::accounts::{self, AccountStore};
use crate::engine::{SessionState, SqlExecutor};
use crate::error::{SqlError, SqlResult};
use crate::load::Warning;
use crate::result::StatementResult;
use crate::sql_text::{split_statements, unwrap_executable_comment};
use crate::types::Datum;
use crate::value;

use super::column::ColumnDef;
use super::convert;
use super::credentials::Account;
use super::dispatch::{self, Route};
use super::functions;
use super::load_data::LoadSettings;
use super::outcome::{
    ExecutedStatement, OkSummary, PreparedStatement, QueryOutcome, ResultSet, SessionStatus,
    StatementId,
};
use super::prepared::{Prepared, user_variable_select};
use super::probe::Probe;
use super::processlist::{Process, ProcessList};
use super::sql_prepare;
use super::text_plans::{self, Shaped, TextPlans};
use super::traits::{
    LocalInfile, NoLocalInfile, QueryResponse, SessionContext, SessionTimeouts, SqlEngine,
    SqlSession,
};
use super::value::Value;
use super::variables::{GlobalVariables, SessionVariables, VariableDefaults};

/// Server-wide counters reported by `SHOW GLOBAL STATUS`.
#[derive(Debug)]
pub(super) struct ServerCounters {
    pub started: Instant,
    pub sessions: AtomicU64,
    pub questions: AtomicU64,
}

/// The SQL engine as the protocols see it (see the module documentation).
pub struct SqlFrontend {
    executor: Arc<SqlExecutor>,
    accounts: Arc<AccountStore>,
    defaults: VariableDefaults,
    globals: Arc<GlobalVariables>,
    counters: Arc<ServerCounters>,
    processes: Arc<ProcessList>,
}

impl SqlFrontend {
    /// Opens the SQL layer over `storage` (loading the catalog); logins and account statements
    /// use `accounts` (the table both ports share); sessions start from `defaults`.
    pub fn open(
        storage: orcinus_storage::Engine,
        defaults: VariableDefaults,
        accounts: Arc<AccountStore>,
    ) -> SqlResult<Self> {
        Self::open_with(storage, defaults, accounts, AnalyticsConfig::default())
    }

    /// Like [`Self::open`], with the analytical executor's settings.
    pub fn open_with(
        storage: orcinus_storage::Engine,
        defaults: VariableDefaults,
        accounts: Arc<AccountStore>,
        analytics: AnalyticsConfig,
    ) -> SqlResult<Self> {
        Ok(Self {
            executor: SqlExecutor::open_configured(
                storage,
                analytics,
                TxnGate::new(
                    usize::try_from(defaults.max_active_transactions).unwrap_or(usize::MAX),
                    DEFAULT_IDLE_REVOKE,
                ),
            )?,
            accounts,
            globals: GlobalVariables::new(&defaults),
            defaults,
            counters: Arc::new(ServerCounters {
                started: Instant::now(),
                sessions: AtomicU64::new(0),
                questions: AtomicU64::new(0),
            }),
            processes: Arc::new(ProcessList::default()),
        })
    }
}

impl SqlEngine for SqlFrontend {
    type Session = FrontendSession;

    async fn lookup_account(&self, user: &str) -> SqlResult<Option<Account>> {
        Ok(accounts::account_named(&self.accounts, user))
    }

    async fn lookup_account_from(&self, user: &str, client: IpAddr) -> SqlResult<Option<Account>> {
        Ok(accounts::login_account(&self.accounts, user, client))
    }

    fn global_limit(&self, name: &str) -> Option<u64> {
        self.globals
            .get_int(name)
            .and_then(|v| u64::try_from(v).ok())
    }

    async fn open_session(&self, context: SessionContext) -> SqlResult<FrontendSession> {
        let mut state = SessionState::new(None);
        if let Some(db) = &context.database {
            accounts::database_access(&self.accounts, &context.user, &context.host, db)?;
            self.executor.use_database(&mut state, db)?;
        }
        self.counters.sessions.fetch_add(1, Ordering::Relaxed);
        let process = self.processes.register(
            context.connection_id,
            &context.user,
            &context.host,
            context.database.as_deref(),
        );
        let variables = SessionVariables::new(Arc::clone(&self.globals), context.interactive);
        state
            .set_autocommit(variables.autocommit(), self.executor.catalog())
            .await?;
        let mut session = FrontendSession {
            processes: Arc::clone(&self.processes),
            process,
            load_settings: LoadSettings {
                local_infile: self.defaults.local_infile,
                secure_file_priv: self.defaults.secure_file_priv.clone(),
            },
            warnings: Vec::new(),
            user_variables: HashMap::new(),
            timeouts: SessionTimeouts {
                idle: std::time::Duration::from_secs(self.defaults.wait_timeout),
                net_read: std::time::Duration::from_secs(self.defaults.net_read_timeout),
                net_write: std::time::Duration::from_secs(self.defaults.net_write_timeout),
            },
            row_count: 0,
            found_rows: 0,
            executor: Arc::clone(&self.executor),
            accounts: Arc::clone(&self.accounts),
            counters: Arc::clone(&self.counters),
            variables,
            context,
            state,
            prepared: HashMap::new(),
            named_statements: HashMap::new(),
            text_plans: TextPlans::default(),
            last_statement_id: 0,
            questions: 0,
        };
        session.sync_state();
        Ok(session)
    }
}

/// One connection's session (see the module documentation).
pub struct FrontendSession {
    pub(super) executor: Arc<SqlExecutor>,
    pub(super) accounts: Arc<AccountStore>,
    pub(super) counters: Arc<ServerCounters>,
    pub(super) context: SessionContext,
    pub(super) variables: SessionVariables,
    pub(super) state: SessionState,
    pub(super) prepared: HashMap<StatementId, Prepared>,
    /// Statements prepared with SQL `PREPARE`, by lower-case name: id and placeholder count.
    pub(super) named_statements: HashMap<String, (StatementId, usize)>,
    /// Prepared plans of text INSERT shapes (`text_plans.rs`).
    text_plans: TextPlans,
    last_statement_id: StatementId,
    /// Statements this session ran (`SHOW SESSION STATUS LIKE 'Questions'`).
    pub(super) questions: u64,
    /// The server's sessions (KILL, SHOW PROCESSLIST) and this session's entry.
    pub(super) processes: Arc<ProcessList>,
    pub(super) process: Arc<Process>,
    pub(super) load_settings: LoadSettings,
    /// Conditions of the last statement that raised any (`SHOW WARNINGS`).
    pub(super) warnings: Vec<Warning>,
    /// User variables (`SET @a = …`), by lower-case name.
    pub(super) user_variables: HashMap<String, Datum>,
    /// `@@wait_timeout`, `@@net_read_timeout`, `@@net_write_timeout` (the connection reads
    /// them before every command).
    pub(super) timeouts: SessionTimeouts,
    /// `ROW_COUNT()` and `FOUND_ROWS()` after the last statement.
    row_count: i64,
    found_rows: u64,
}

impl Drop for FrontendSession {
    fn drop(&mut self) {
        self.state.reset();
        self.processes.remove(&self.process);
        self.counters.sessions.fetch_sub(1, Ordering::Relaxed);
    }
}

impl FrontendSession {
    /// Runs one statement inside this session's interrupt scope (KILL QUERY), with the
    /// process list showing it while it runs.
    pub(super) async fn run<I: LocalInfile>(
        &mut self,
        statement: &str,
        infile: &mut I,
    ) -> SqlResult<QueryOutcome> {
        let statement = unwrap_executable_comment(statement);
        self.questions += 1;
        self.counters.questions.fetch_add(1, Ordering::Relaxed);
        let process = Arc::clone(&self.process);
        process.begin_statement(statement, self.state.database());
        let interrupt = process.interrupt.clone();
        let result = interrupt.scope(self.run_routed(statement, infile)).await;
        process.end_statement(self.state.database());
        if let Ok(outcome) = &result {
            self.record_counts(outcome);
        }
        result
    }

    /// `ROW_COUNT()` and `FOUND_ROWS()` after a statement that succeeded.
    pub(super) fn record_counts(&mut self, outcome: &QueryOutcome) {
        (self.row_count, self.found_rows) = match outcome {
            QueryOutcome::Rows(rs) => (-1, rs.rows.len() as u64),
            QueryOutcome::Done(ok) => (
                i64::try_from(ok.affected_rows).unwrap_or(i64::MAX),
                self.found_rows,
            ),
        };
    }

    pub(super) fn session_values(&self) -> functions::SessionValues<'_> {
        functions::SessionValues {
            version: self.variables.version(),
            connection_id: self.context.connection_id,
            user: format!("{}@{}", self.context.user, self.context.host),
            current_user: format!("{}@%", self.context.user),
            database: self.state.database(),
            last_insert_id: self.state.last_insert_id(),
            row_count: self.row_count,
            found_rows: self.found_rows,
            user_variables: &self.user_variables,
            variables: &self.variables,
        }
    }

    /// Runs `statement` in the executor, with session functions and user variables replaced by
    /// their values first (`functions.rs`).
    async fn run_executor(&mut self, statement: &str) -> SqlResult<StatementResult> {
        let rewritten = if functions::may_mention(statement) {
            functions::rewrite(statement, &self.session_values())?
        } else {
            None
        };
        if rewritten.is_none()
            && let Some(shaped) = text_plans::shape(statement)
            && let Some(result) = self.run_shaped(shaped).await
        {
            return result;
        }
        let text = rewritten.as_deref().unwrap_or(statement);
        let mut last = None;
        for result in self.executor.execute(&mut self.state, text).await {
            last = Some(result?);
        }
        last.ok_or(SqlError::EmptyQuery)
    }

    /// Runs a shaped text statement through its kept plan, preparing and keeping the plan on
    /// first sight; `None` if the shape does not prepare (the statement then runs as text).
    async fn run_shaped(&mut self, shaped: Shaped) -> Option<SqlResult<StatementResult>> {
        let plan = match self.text_plans.get(&shaped.shape) {
            Some(plan) if plan.fits(&self.state) => plan,
            _ => {
                let plan = self
                    .executor
                    .prepare(&self.state, &shaped.shape)
                    .await
                    .ok()?;
                if plan.param_count() != shaped.params.len() || !plan.columns().is_empty() {
                    return None;
                }
                let plan = Arc::new(plan);
                self.text_plans.insert(shaped.shape, Arc::clone(&plan));
                plan
            }
        };
        Some(
            self.executor
                .execute_prepared(&mut self.state, &plan, &shaped.params)
                .await,
        )
    }

    /// `SET @a = expr, …`: every expression is evaluated (together, as one
    /// `SELECT expr, …` with `params` bound to its placeholders) before any is set.
    pub(super) async fn set_user_variables(
        &mut self,
        assignments: &[(String, String)],
        params: &[Datum],
    ) -> SqlResult<QueryOutcome> {
        let select = user_variable_select(assignments);
        let rewritten = functions::rewrite(&select, &self.session_values())?;
        let text = rewritten.as_deref().unwrap_or(&select);
        let plan = self.executor.prepare(&self.state, text).await?;
        let row = match self
            .executor
            .execute_prepared(&mut self.state, &plan, params)
            .await?
        {
            StatementResult::Rows { rows, .. } => rows.into_iter().next().unwrap_or_default(),
            StatementResult::Affected { .. } => {
                return Err(SqlError::Internal("SELECT returned no rows".into()));
            }
        };
        let mut values = row.into_iter();
        let assigned: Vec<(String, Datum)> = assignments
            .iter()
            .map(|(name, _)| (name.clone(), values.next().unwrap_or(Datum::Null)))
            .collect();
        self.user_variables.extend(assigned);
        Ok(QueryOutcome::Done(OkSummary::default()))
    }

    async fn run_routed<I: LocalInfile>(
        &mut self,
        statement: &str,
        infile: &mut I,
    ) -> SqlResult<QueryOutcome> {
        let route = dispatch::route(statement);
        if !matches!(route, Route::SessionState(Probe::ShowWarnings)) {
            self.warnings.clear();
        }
        if let Some(command) = sql_prepare::recognize(statement) {
            // Boxed: EXECUTE of a routed statement runs it through `run` again.
            return Box::pin(self.sql_prepare(command?)).await;
        }
        if let Some(assignments) = functions::parse_user_variable_set(statement) {
            return self.set_user_variables(&assignments?, &[]).await;
        }
        let result = match route {
            Route::SessionState(probe) => return self.answer(probe).await,
            // Boxed: a large future on a rare path (see `prepared::execute_with`).
            Route::LoadData => return Box::pin(self.load_data(statement, infile)).await,
            Route::Kill => return self.kill(statement),
            Route::ProcessList(full) => return Ok(self.show_processlist(full)),
            Route::Show(name) => self.show(statement, &name)?,
            Route::Accounts(name) => {
                Box::pin(accounts::account_statement(
                    &self.accounts,
                    &self.context.user,
                    &self.context.host,
                    statement,
                    &name,
                ))
                .await?
            }
            Route::Executor => self.run_executor(statement).await?,
        };
        Ok(self.outcome(result))
    }

    pub(super) fn outcome(&self, result: StatementResult) -> QueryOutcome {
        match result {
            StatementResult::Rows { columns, rows } => QueryOutcome::Rows(ResultSet {
                columns: columns
                    .into_iter()
                    .map(convert::into_output_column)
                    .collect(),
                rows: rows
                    .into_iter()
                    .map(|r| r.into_iter().map(convert::result_value).collect())
                    .collect(),
                warnings: self.state.warnings(),
            }),
            StatementResult::Affected {
                affected_rows,
                last_insert_id,
                info,
            } => {
                let info = info.unwrap_or_default();
                // CLIENT_FOUND_ROWS: UPDATE reports the rows it matched, not those it changed.
                let affected_rows = if self.context.found_rows {
                    rows_matched(&info).unwrap_or(affected_rows)
                } else {
                    affected_rows
                };
                QueryOutcome::Done(OkSummary {
                    affected_rows,
                    last_insert_id,
                    warnings: self.state.warnings(),
                    info,
                })
            }
        }
    }

    pub(super) fn next_statement_id(&mut self) -> StatementId {
        loop {
            self.last_statement_id = self.last_statement_id.wrapping_add(1);
            let id = self.last_statement_id;
            if id != 0 && !self.prepared.contains_key(&id) {
                return id;
            }
        }
    }
}

/// True if `statement` may read information_schema.PROCESSLIST (its rows come from the
/// session's process list, not the catalog).
pub(super) fn mentions_processlist(statement: &str) -> bool {
    const NAME: &[u8] = b"processlist";
    statement
        .as_bytes()
        .windows(NAME.len())
        .any(|w| w.eq_ignore_ascii_case(NAME))
}

/// The matched-row count of an UPDATE's info text (`Rows matched: 3  Changed: 1  Warnings: 0`).
fn rows_matched(info: &str) -> Option<u64> {
    let rest = info.strip_prefix("Rows matched: ")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

impl SqlSession for FrontendSession {
    fn timeouts(&self) -> Option<SessionTimeouts> {
        Some(self.timeouts)
    }

    fn status(&self) -> SessionStatus {
        SessionStatus {
            autocommit: self.state.autocommit(),
            in_transaction: self.state.in_transaction(),
        }
    }

    fn set_multi_statements(&mut self, enabled: bool) {
        self.context.multi_statements = enabled;
    }

    async fn use_database(&mut self, name: &str) -> SqlResult<()> {
        accounts::database_access(&self.accounts, &self.context.user, &self.context.host, name)?;
        self.executor.use_database(&mut self.state, name)
    }

    async fn query(&mut self, sql: &str) -> QueryResponse {
        self.query_with_infile(sql, &mut NoLocalInfile).await
    }

    async fn query_with_infile<I: LocalInfile>(
        &mut self,
        sql: &str,
        infile: &mut I,
    ) -> QueryResponse {
        let statements = split_statements(sql);
        if statements.is_empty() {
            return QueryResponse::failed(SqlError::EmptyQuery);
        }
        if statements.len() > 1 && !self.context.multi_statements {
            let near = statements.get(1).map(|s| s.trim()).unwrap_or_default();
            return QueryResponse::failed(SqlError::Syntax {
                near: near.chars().take(80).collect(),
                line: 1,
            });
        }
        let mut response = QueryResponse::default();
        for statement in statements {
            match self.run(statement, infile).await {
                Ok(outcome) => response.completed.push(ExecutedStatement {
                    outcome,
                    status: self.status(),
                }),
                Err(e) => {
                    response.error = Some(e);
                    break;
                }
            }
        }
        response
    }

    async fn field_list(&mut self, table: &str, pattern: &str) -> SqlResult<Vec<ColumnDef>> {
        let db = self
            .state
            .database()
            .ok_or(SqlError::NoDatabaseSelected)?
            .to_owned();
        let table = self.executor.catalog().snapshot().table(&db, table)?;
        let def = &table.def;
        Ok((0..def.columns.len())
            .filter(|&i| {
                pattern.is_empty()
                    || def
                        .columns
                        .get(i)
                        .is_some_and(|c| value::like(c.name.as_bytes(), pattern.as_bytes(), b'\\'))
            })
            .filter_map(|i| convert::table_column(&db, def, i))
            .collect())
    }

    async fn prepare(&mut self, sql: &str) -> SqlResult<PreparedStatement> {
        let statements = split_statements(sql);
        let statement = match statements.as_slice() {
            [] => return Err(SqlError::EmptyQuery),
            [one] => *one,
            [_, second, ..] => {
                return Err(SqlError::Syntax {
                    near: second.trim().chars().take(80).collect(),
                    line: 1,
                });
            }
        };
        let statement = unwrap_executable_comment(statement);
        let (prepared, param_count, columns) = self.prepare_routed(statement).await?;
        let param_count = u16::try_from(param_count)
            .map_err(|_| SqlError::WrongArguments("mysqld_stmt_prepare".into()))?;
        let id = self.next_statement_id();
        self.prepared.insert(id, prepared);
        Ok(PreparedStatement {
            id,
            param_count,
            columns,
        })
    }

    async fn execute_prepared(
        &mut self,
        id: StatementId,
        params: Vec<Value>,
    ) -> SqlResult<QueryOutcome> {
        if !self.prepared.contains_key(&id) {
            return Err(SqlError::UnknownStatement {
                id,
                command: "mysqld_stmt_execute",
            });
        }
        let params = params
            .into_iter()
            .map(convert::parameter)
            .collect::<SqlResult<Vec<_>>>()?;
        self.execute_with(id, params).await
    }
    fn close_prepared(&mut self, id: StatementId) {
        self.prepared.remove(&id);
    }

    async fn reset(&mut self) -> SqlResult<()> {
        let db = self.state.database().map(str::to_owned);
        self.state.reset();
        self.state = SessionState::new(db);
        self.variables.reset();
        self.state
            .set_autocommit(self.variables.autocommit(), self.executor.catalog())
            .await?;
        self.sync_state();
        self.prepared.clear();
        self.named_statements.clear();
        self.text_plans.clear();
        Ok(())
    }

    fn killed(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        Arc::clone(&self.process).wait_killed()
    }

    async fn close(mut self) {
        self.state.reset();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_matched_reads_the_update_info() {
        assert_eq!(
            rows_matched("Rows matched: 12  Changed: 3  Warnings: 0"),
            Some(12)
        );
        assert_eq!(rows_matched("Records: 2  Duplicates: 0"), None);
    }
}
