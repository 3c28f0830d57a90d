//! The error type of the SQL layer, as seen by the protocols.
//!
//! Invariants: every variant carries enough context for the MySQL front door to build the
//! exact MySQL 8.0 error (code, SQLSTATE, message) in one mapping function
//! (`server/src/mysql/error_map.rs`); [`SqlError::kind`] gives a coarse class for other
//! protocols and logs. `Internal` is reserved for real bugs.

use orcinus_storage::StorageError;

/// Result alias for the session boundary.
pub type SqlResult<T> = Result<T, SqlError>;

/// Everything the SQL layer can report to a client.
#[derive(Debug, thiserror::Error)]
pub enum SqlError {
    /// Authentication failed (wrong password, unknown user, or no password from a remote host).
    #[error("access denied for user '{user}'@'{host}'")]
    AccessDenied {
        /// The user name the client sent.
        user: String,
        /// The client host as the server sees it.
        host: String,
        /// Whether the client sent a non-empty password.
        using_password: bool,
    },
    /// A database named by the client does not exist.
    #[error("unknown database '{0}'")]
    UnknownDatabase(String),
    /// A table does not exist.
    #[error("table '{database}.{table}' doesn't exist")]
    NoSuchTable {
        /// Database part of the name.
        database: String,
        /// Table part of the name.
        table: String,
    },
    /// The statement needs a current database and none is selected.
    #[error("no database selected")]
    NoDatabaseSelected,
    /// The statement is valid SQL that Orcinus does not support yet; names the statement.
    #[error("this version of Orcinus doesn't yet support '{0}'")]
    NotSupportedYet(String),
    /// The statement cannot be prepared; clients such as sysbench fall back to text queries.
    #[error("this command is not supported in the prepared statement protocol yet")]
    UnsupportedInPreparedStatement,
    /// The query text is empty.
    #[error("query was empty")]
    EmptyQuery,
    /// The query text is not valid SQL.
    #[error("syntax error near '{near}'")]
    Syntax {
        /// The text at and after the point of the error (MySQL shows up to 80 characters).
        near: String,
        /// 1-based line of the error.
        line: u32,
    },
    /// A prepared statement id that this session does not hold.
    #[error("unknown prepared statement handler ({id}) given to {command}")]
    UnknownStatement {
        /// The id the client sent.
        id: u32,
        /// The command that used it (for example `mysqld_stmt_execute`).
        command: &'static str,
    },
    /// Arguments of a command or function are wrong (for example a parameter count mismatch).
    #[error("incorrect arguments to {0}")]
    WrongArguments(String),
    /// `SELECT @@x` or `SET x = …` named a variable that does not exist.
    #[error("unknown system variable '{0}'")]
    UnknownSystemVariable(String),
    /// `SET x = v` with a value the variable does not accept.
    #[error("variable '{name}' can't be set to the value of '{value}'")]
    WrongValueForVariable {
        /// Variable name.
        name: String,
        /// The rejected value as text.
        value: String,
    },
    /// `SET x = …` on a variable that cannot be changed.
    #[error("variable '{0}' is a read only variable")]
    ReadOnlyVariable(String),
    /// An error of the SQL engine library (`crate::error::SqlError`), which carries its own
    /// MySQL code, SQLSTATE and message (account statements today).
    #[error(transparent)]
    Engine(crate::error::SqlError),
    /// A storage error (conflicts keep their own kinds: deadlock, lock wait timeout).
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// A bug in Orcinus: an invariant did not hold.
    #[error("internal error: {0}")]
    Internal(String),
}

/// Coarse classification of [`SqlError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Authentication or authorization failure.
    Access,
    /// A named object (database, table, statement, variable) does not exist.
    NotFound,
    /// Valid input that Orcinus does not support (yet).
    Unsupported,
    /// Malformed input: syntax, arguments, values.
    InvalidInput,
    /// A retryable transaction conflict (deadlock, lock wait timeout).
    Conflict,
    /// The storage engine failed or is unavailable.
    Storage,
    /// A bug in Orcinus.
    Internal,
}

impl SqlError {
    /// The coarse class of this error.
    #[must_use]
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::AccessDenied { .. } => ErrorKind::Access,
            Self::UnknownDatabase(_)
            | Self::NoSuchTable { .. }
            | Self::NoDatabaseSelected
            | Self::UnknownStatement { .. }
            | Self::UnknownSystemVariable(_) => ErrorKind::NotFound,
            Self::NotSupportedYet(_) | Self::UnsupportedInPreparedStatement => {
                ErrorKind::Unsupported
            }
            Self::EmptyQuery
            | Self::Syntax { .. }
            | Self::WrongArguments(_)
            | Self::WrongValueForVariable { .. }
            | Self::ReadOnlyVariable(_) => ErrorKind::InvalidInput,
            Self::Engine(e) => match e.code() {
                1044 | 1045 | 1227 => ErrorKind::Access,
                1235 | 1524 => ErrorKind::Unsupported,
                1141 => ErrorKind::NotFound,
                1205 | 1213 => ErrorKind::Conflict,
                1105 if matches!(e, crate::error::SqlError::Storage(_)) => ErrorKind::Storage,
                1105 => ErrorKind::Internal,
                _ => ErrorKind::InvalidInput,
            },
            Self::Storage(e) if e.is_conflict() => ErrorKind::Conflict,
            Self::Storage(_) => ErrorKind::Storage,
            Self::Internal(_) => ErrorKind::Internal,
        }
    }
}
