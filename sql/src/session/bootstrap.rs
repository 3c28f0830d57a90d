//! The engine the server runs until the SQL layer exists.
//!
//! Invariants: it answers only what session state determines (system variables, the current
//! user, the connection id, `SET` of session variables, `SHOW WARNINGS` of a session that never
//! raises warnings) and rejects every other statement with `NotSupportedYet` naming it. It has
//! no databases, so selecting one fails with `UnknownDatabase`, and no statement can be
//! prepared (1295, which sysbench treats as "use text queries"). Logins are checked against
//! the account table when it is given one ([`BootstrapEngine::with_accounts`]); otherwise its
//! one account is `root` with no password. With the account table it also runs the account
//! statements (CREATE/ALTER/DROP USER, GRANT, REVOKE, SET PASSWORD, SHOW GRANTS) and refuses
//! databases the account has no privileges on (1044, before the existence check).

use std::net::IpAddr;
use std::sync::Arc;

use super::column::{ColumnDef, ColumnFlags, ColumnType};
use super::credentials::{Account, Credentials};
use super::error::{SqlError, SqlResult};
use super::outcome::{
    ExecutedStatement, OkSummary, PreparedStatement, QueryOutcome, ResultSet, SessionStatus,
    StatementId,
};
use super::probe::{Probe, ProbeExpr, ProbeItem, recognize};
use super::sql_text::split_statements;
use super::traits::{QueryResponse, SessionContext, SqlEngine, SqlSession};
use super::value::Value;
use super::variables::{SessionVariables, VariableDefaults, VariableValue};
use crate::accounts::{self, AccountStore};

/// The bootstrap engine (see the module documentation).
#[derive(Debug, Clone)]
pub struct BootstrapEngine {
    defaults: VariableDefaults,
    accounts: Option<Arc<AccountStore>>,
}

impl BootstrapEngine {
    /// An engine whose sessions start from `defaults`; its one account is `root` without a
    /// password.
    #[must_use]
    pub fn new(defaults: VariableDefaults) -> Self {
        Self {
            defaults,
            accounts: None,
        }
    }

    /// An engine whose logins are checked against the account table `accounts`.
    #[must_use]
    pub fn with_accounts(defaults: VariableDefaults, accounts: Arc<AccountStore>) -> Self {
        Self {
            defaults,
            accounts: Some(accounts),
        }
    }
}

impl SqlEngine for BootstrapEngine {
    type Session = BootstrapSession;

    async fn lookup_account(&self, user: &str) -> SqlResult<Option<Account>> {
        Ok(match &self.accounts {
            Some(store) => crate::accounts::account_named(store, user),
            None => (user == "root").then(|| Account {
                user: user.to_owned(),
                credentials: Credentials::NoPassword,
            }),
        })
    }

    async fn lookup_account_from(&self, user: &str, client: IpAddr) -> SqlResult<Option<Account>> {
        match &self.accounts {
            Some(store) => Ok(crate::accounts::login_account(store, user, client)),
            None => self.lookup_account(user).await,
        }
    }

    async fn open_session(&self, context: SessionContext) -> SqlResult<BootstrapSession> {
        if let Some(db) = &context.database {
            if let Some(store) = &self.accounts {
                accounts::check_database_for_session(store, &context.user, &context.host, db)?;
            }
            return Err(SqlError::UnknownDatabase(db.clone()));
        }
        Ok(BootstrapSession {
            variables: SessionVariables::new(&self.defaults, context.interactive),
            context,
            accounts: self.accounts.clone(),
        })
    }
}

/// A session of the [`BootstrapEngine`].
#[derive(Debug)]
pub struct BootstrapSession {
    context: SessionContext,
    variables: SessionVariables,
    accounts: Option<Arc<AccountStore>>,
}

impl BootstrapSession {
    fn run(&mut self, statement: &str) -> SqlResult<QueryOutcome> {
        match recognize(statement)? {
            Probe::Select { items, limit } => self.select(&items, limit),
            Probe::Set(assignments) => {
                let validated = assignments
                    .iter()
                    .map(|a| self.variables.validate(&a.name, a.value.as_deref()))
                    .collect::<SqlResult<Vec<_>>>()?;
                for (key, value) in validated {
                    self.variables.apply(&key, value)?;
                }
                Ok(QueryOutcome::Done(OkSummary::default()))
            }
            Probe::SetNames { charset, collation } => {
                self.set_names(&charset, collation.as_deref())
            }
            Probe::Use(db) => {
                self.check_database(&db)?;
                Err(SqlError::UnknownDatabase(db))
            }
            Probe::ShowWarnings => Ok(QueryOutcome::Rows(ResultSet {
                columns: vec![
                    ColumnDef::new("Level", ColumnType::VarChar).with_length(28),
                    ColumnDef::new("Code", ColumnType::Long)
                        .with_flags(ColumnFlags::UNSIGNED.with(ColumnFlags::NOT_NULL))
                        .with_length(4),
                    ColumnDef::new("Message", ColumnType::VarChar).with_length(2048),
                ],
                rows: Vec::new(),
                warnings: 0,
            })),
        }
    }

    /// 1044 unless the session's account may use `db` (checked before existence, as MySQL).
    fn check_database(&self, db: &str) -> SqlResult<()> {
        match &self.accounts {
            Some(store) => accounts::check_database_for_session(
                store,
                &self.context.user,
                &self.context.host,
                db,
            ),
            None => Ok(()),
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
            self.variables.apply(&key, value)?;
        }
        Ok(QueryOutcome::Done(OkSummary::default()))
    }

    fn select(&self, items: &[ProbeItem], limit: Option<u64>) -> SqlResult<QueryOutcome> {
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
        let user_at_host = format!("{}@{}", self.context.user, self.context.host);
        Ok(match expr {
            ProbeExpr::SystemVariable(name) => match self.variables.get(name)? {
                VariableValue::Int(v) => (ColumnType::LongLong, Value::Int(*v)),
                VariableValue::Text(t) => (ColumnType::VarChar, Value::text(t.clone())),
                VariableValue::Null => (ColumnType::VarChar, Value::Null),
            },
            ProbeExpr::Database => (
                ColumnType::VarChar,
                self.context
                    .database
                    .clone()
                    .map_or(Value::Null, Value::text),
            ),
            ProbeExpr::User => (ColumnType::VarChar, Value::text(user_at_host)),
            ProbeExpr::CurrentUser => (
                ColumnType::VarChar,
                Value::text(format!("{}@%", self.context.user)),
            ),
            ProbeExpr::ConnectionId => (
                ColumnType::LongLong,
                Value::UInt(u64::from(self.context.connection_id)),
            ),
            ProbeExpr::Version => (
                ColumnType::VarChar,
                Value::text(self.variables_text("version")?),
            ),
            ProbeExpr::Integer(i) => (ColumnType::LongLong, Value::Int(*i)),
            ProbeExpr::Text(t) => (ColumnType::VarChar, Value::text(t.clone())),
        })
    }

    fn variables_text(&self, name: &str) -> SqlResult<String> {
        match self.variables.get(name)? {
            VariableValue::Text(t) => Ok(t.clone()),
            other => Err(SqlError::Internal(format!("variable {name} is {other:?}"))),
        }
    }
}

impl SqlSession for BootstrapSession {
    fn status(&self) -> SessionStatus {
        SessionStatus {
            autocommit: self.variables.autocommit(),
            in_transaction: false,
        }
    }

    fn set_multi_statements(&mut self, enabled: bool) {
        self.context.multi_statements = enabled;
    }

    async fn use_database(&mut self, name: &str) -> SqlResult<()> {
        self.check_database(name)?;
        Err(SqlError::UnknownDatabase(name.to_owned()))
    }

    async fn query(&mut self, sql: &str) -> QueryResponse {
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
            let account_statement = match &self.accounts {
                Some(store) => {
                    let (user, host) = (&self.context.user, &self.context.host);
                    accounts::run_for_session(store, user, host, statement).await
                }
                None => None,
            };
            match account_statement.unwrap_or_else(|| self.run(statement)) {
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

    async fn field_list(&mut self, table: &str, _pattern: &str) -> SqlResult<Vec<ColumnDef>> {
        match &self.context.database {
            None => Err(SqlError::NoDatabaseSelected),
            Some(db) => Err(SqlError::NoSuchTable {
                database: db.clone(),
                table: table.to_owned(),
            }),
        }
    }

    async fn prepare(&mut self, _sql: &str) -> SqlResult<PreparedStatement> {
        Err(SqlError::UnsupportedInPreparedStatement)
    }

    async fn execute_prepared(
        &mut self,
        id: StatementId,
        _params: Vec<Value>,
    ) -> SqlResult<QueryOutcome> {
        Err(SqlError::UnknownStatement {
            id,
            command: "mysqld_stmt_execute",
        })
    }

    fn close_prepared(&mut self, _id: StatementId) {}

    async fn reset(&mut self) -> SqlResult<()> {
        self.variables.reset();
        Ok(())
    }

    async fn close(self) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn session() -> BootstrapSession {
        BootstrapEngine::new(VariableDefaults {
            version: "8.0.36-orcinus".into(),
            max_allowed_packet: 1 << 20,
            wait_timeout: 28800,
            interactive_timeout: 28800,
            net_read_timeout: 30,
            net_write_timeout: 60,
        })
        .open_session(SessionContext {
            user: "root".into(),
            host: "127.0.0.1".into(),
            connection_id: 7,
            database: None,
            multi_statements: false,
            interactive: false,
            found_rows: false,
        })
        .await
        .unwrap()
    }

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        // The bootstrap futures never await anything, so one poll completes them.
        let waker = std::task::Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        let mut f = std::pin::pin!(f);
        match f.as_mut().poll(&mut cx) {
            std::task::Poll::Ready(v) => v,
            std::task::Poll::Pending => panic!("bootstrap future pending"),
        }
    }

    #[test]
    fn answers_come_from_session_state() {
        let mut s = block_on(session());
        let r = block_on(s.query("SET autocommit = 0"));
        assert!(r.error.is_none());
        assert!(!r.completed[0].status.autocommit);
        let r = block_on(s.query("select @@autocommit, connection_id(), database()"));
        let QueryOutcome::Rows(rs) = &r.completed[0].outcome else {
            panic!("rows")
        };
        assert_eq!(
            rs.rows,
            vec![vec![Value::Int(0), Value::UInt(7), Value::Null]]
        );
    }

    #[test]
    fn multi_statements_need_the_option() {
        let mut s = block_on(session());
        let r = block_on(s.query("select 1; select 2"));
        assert!(matches!(r.error, Some(SqlError::Syntax { .. })));
        s.set_multi_statements(true);
        let r = block_on(s.query("select 1; select 2; select * from t; select 3"));
        assert_eq!(r.completed.len(), 2);
        assert!(matches!(r.error, Some(SqlError::NotSupportedYet(_))));
    }

    #[test]
    fn failed_set_changes_nothing() {
        let mut s = block_on(session());
        let r = block_on(s.query("SET autocommit = 0, character_set_client = latin1"));
        assert!(r.error.is_some());
        assert!(s.status().autocommit);
    }
}
