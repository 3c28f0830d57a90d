//! The handler traits a wire protocol calls: [`SqlEngine`] (accounts, opening sessions) and
//! [`SqlSession`] (one client's statements and state).
//!
//! Invariants: the protocol owns bytes, framing, authentication exchanges and prepared
//! statement parameter decoding; the engine owns SQL text, statement ids and session state.
//! A failed statement leaves the session usable; nothing is half-applied across the boundary.
//! Futures are `Send` so one tokio task can serve a connection on any worker thread.

use std::future::Future;
use std::net::IpAddr;

use super::column::ColumnDef;
use super::credentials::Account;
use super::outcome::{
    ExecutedStatement, PreparedStatement, QueryOutcome, SessionStatus, StatementId,
};
use super::value::Value;
use crate::error::{SqlError, SqlResult};

/// Who is opening a session and with which options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionContext {
    /// Authenticated user name.
    pub user: String,
    /// Client host (the peer IP address as text).
    pub host: String,
    /// Server-assigned connection id (`CONNECTION_ID()`).
    pub connection_id: u32,
    /// Database to select on connect; an unknown name fails the open with
    /// [`SqlError::UnknownDatabase`].
    pub database: Option<String>,
    /// Whether one query text may hold several `;`-separated statements.
    pub multi_statements: bool,
    /// The client declared itself interactive (CLIENT_INTERACTIVE): its idle limit is
    /// `interactive_timeout` instead of `wait_timeout`.
    pub interactive: bool,
    /// CLIENT_FOUND_ROWS: UPDATE reports rows matched instead of rows changed as affected rows.
    pub found_rows: bool,
}

/// The results of one query text: every statement that completed, then the error that stopped
/// execution, if any (later statements are not run).
#[derive(Debug, Default)]
pub struct QueryResponse {
    /// Completed statements, in order.
    pub completed: Vec<ExecutedStatement>,
    /// The error of the statement that failed; `None` when all statements ran.
    pub error: Option<SqlError>,
}

impl QueryResponse {
    /// A response for a query that failed before any statement completed.
    #[must_use]
    pub fn failed(error: SqlError) -> Self {
        Self {
            completed: Vec::new(),
            error: Some(error),
        }
    }
}

/// The client side of `LOAD DATA LOCAL INFILE`: the protocol asks the client for a file and
/// passes its bytes on. The session calls [`LocalInfile::request`] at most once per statement
/// and may stop reading before the end (after an error); the protocol then discards the rest
/// of the client's file so the connection stays in step.
pub trait LocalInfile: Send {
    /// True if the client enabled LOCAL INFILE for this connection (CLIENT_LOCAL_FILES).
    fn enabled(&self) -> bool;

    /// Asks the client to send `file_name`.
    fn request(&mut self, file_name: &str) -> impl Future<Output = SqlResult<()>> + Send;

    /// The next piece of the requested file; `None` once the client has sent all of it.
    fn next_chunk(&mut self) -> impl Future<Output = SqlResult<Option<Vec<u8>>>> + Send;
}

/// The [`LocalInfile`] of a caller that cannot receive client files (LOAD DATA LOCAL then
/// fails with 3948, as with a client that did not enable it).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoLocalInfile;

impl LocalInfile for NoLocalInfile {
    fn enabled(&self) -> bool {
        false
    }

    async fn request(&mut self, _file_name: &str) -> SqlResult<()> {
        Err(SqlError::LocalInfileDisabled)
    }

    async fn next_chunk(&mut self) -> SqlResult<Option<Vec<u8>>> {
        Ok(None)
    }
}

/// The SQL engine as a protocol sees it: shared by all connections.
pub trait SqlEngine: Send + Sync + 'static {
    /// The per-connection session type.
    type Session: SqlSession;

    /// Looks up an account by user name; `Ok(None)` if there is no such user.
    fn lookup_account(&self, user: &str)
    -> impl Future<Output = SqlResult<Option<Account>>> + Send;

    /// The account `user` logs in as from `client` (MySQL matches the account's host pattern
    /// against the client; the most specific match wins). Engines without host patterns keep
    /// the default, [`SqlEngine::lookup_account`]; an engine over the account table answers
    /// with `crate::accounts::login_account`.
    fn lookup_account_from(
        &self,
        user: &str,
        client: IpAddr,
    ) -> impl Future<Output = SqlResult<Option<Account>>> + Send {
        let _ = client;
        self.lookup_account(user)
    }

    /// The current global value of a limit the protocol enforces for connections it accepts
    /// from now on (`max_connections`, `max_allowed_packet`, `wait_timeout`,
    /// `interactive_timeout`, `net_read_timeout`, `net_write_timeout`: `SET GLOBAL` changes
    /// them); `None` keeps the protocol's configured value.
    fn global_limit(&self, name: &str) -> Option<u64> {
        let _ = name;
        None
    }

    /// Opens a session for an authenticated user.
    fn open_session(
        &self,
        context: SessionContext,
    ) -> impl Future<Output = SqlResult<Self::Session>> + Send;
}

/// A session's connection timeouts (see [`SqlSession::timeouts`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionTimeouts {
    /// Idle limit between commands (`wait_timeout`).
    pub idle: std::time::Duration,
    /// Limit for receiving the rest of a started packet (`net_read_timeout`).
    pub net_read: std::time::Duration,
    /// Limit for sending a response (`net_write_timeout`).
    pub net_write: std::time::Duration,
}

/// One client's session: current database, variables, transaction, prepared statements.
pub trait SqlSession: Send + 'static {
    /// Current autocommit / transaction state.
    fn status(&self) -> SessionStatus;

    /// The session's connection timeouts (`wait_timeout`, `net_read_timeout`,
    /// `net_write_timeout`), which `SET [SESSION]` changes; the protocol applies them before
    /// every command. `None` keeps the protocol's configured values.
    fn timeouts(&self) -> Option<SessionTimeouts> {
        None
    }

    /// Allows or forbids several statements per query text (COM_SET_OPTION).
    fn set_multi_statements(&mut self, enabled: bool);

    /// Selects the current database (COM_INIT_DB, `USE`).
    fn use_database(&mut self, name: &str) -> impl Future<Output = SqlResult<()>> + Send;

    /// Runs a query text (COM_QUERY).
    fn query(&mut self, sql: &str) -> impl Future<Output = QueryResponse> + Send;

    /// Runs a query text whose `LOAD DATA LOCAL` statements read the client's file through
    /// `infile`. Engines without LOAD DATA keep the default, [`SqlSession::query`].
    fn query_with_infile<I: LocalInfile>(
        &mut self,
        sql: &str,
        infile: &mut I,
    ) -> impl Future<Output = QueryResponse> + Send {
        let _ = infile;
        self.query(sql)
    }

    /// Resolves when this session's connection has been killed (`KILL CONNECTION` from another
    /// session): the protocol then closes the connection. Engines without KILL never resolve.
    fn killed(&self) -> impl Future<Output = ()> + Send + 'static {
        std::future::pending()
    }

    /// Columns of `table` in the current database whose names match the LIKE `pattern`
    /// (COM_FIELD_LIST; an empty pattern matches all).
    fn field_list(
        &mut self,
        table: &str,
        pattern: &str,
    ) -> impl Future<Output = SqlResult<Vec<ColumnDef>>> + Send;

    /// Prepares a statement (COM_STMT_PREPARE). Statements that cannot be prepared return
    /// [`SqlError::UnsupportedInPreparedStatement`].
    fn prepare(&mut self, sql: &str) -> impl Future<Output = SqlResult<PreparedStatement>> + Send;

    /// Executes a prepared statement with one value per placeholder (COM_STMT_EXECUTE).
    fn execute_prepared(
        &mut self,
        id: StatementId,
        params: Vec<Value>,
    ) -> impl Future<Output = SqlResult<QueryOutcome>> + Send;

    /// Drops a prepared statement (COM_STMT_CLOSE); unknown ids are ignored, as in MySQL.
    fn close_prepared(&mut self, id: StatementId);

    /// Returns the session to its just-connected state (COM_RESET_CONNECTION): rolls back an
    /// open transaction, drops prepared statements, resets variables; keeps user and database.
    fn reset(&mut self) -> impl Future<Output = SqlResult<()>> + Send;

    /// Ends the session (client quit or disconnect): rolls back an open transaction.
    fn close(self) -> impl Future<Output = ()> + Send;
}
