//! [`SqlError`]: the one error type of the SQL crate, from the parser to the session boundary.
//! Every variant maps to a MySQL error code, SQLSTATE and a message worded like MySQL 8.0's, so
//! the MySQL front door turns an error into an error packet in one place
//! (`server/src/mysql/error.rs`, from [`SqlError::code`], [`SqlError::sqlstate`], `to_string()`);
//! [`SqlError::kind`] is the coarse class other protocols and logs use.
//!
//! Invariant: storage conflicts keep their identity (Deadlock → 1213, LockWaitTimeout → 1205);
//! [`SqlError::Internal`] is reserved for real bugs and corrupt data, never for user input.

use crate::codec::CodecError;
use orcinus_storage::{ErrorKind as StorageErrorKind, StorageError};

/// Everything a SQL statement can fail with.
#[derive(Debug, thiserror::Error)]
pub enum SqlError {
    /// 1064: the text does not parse.
    #[error(
        "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '{0}'"
    )]
    Parse(String),
    /// 1064 from the parser: the text from the point of the error, as MySQL quotes it.
    #[error(
        "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '{near}' at line {line}"
    )]
    Syntax {
        /// Up to 80 characters of the statement from the point of the error.
        near: String,
        /// 1-based line of the error.
        line: u64,
    },
    /// 1065
    #[error("Query was empty")]
    EmptyQuery,
    /// 1046
    #[error("No database selected")]
    NoDatabaseSelected,
    /// 1049
    #[error("Unknown database '{0}'")]
    UnknownDatabase(String),
    /// 1008
    #[error("Can't drop database '{0}'; database doesn't exist")]
    DropMissingDatabase(String),
    /// 1007
    #[error("Can't create database '{0}'; database exists")]
    DatabaseExists(String),
    /// 1146
    #[error("Table '{db}.{table}' doesn't exist")]
    NoSuchTable { db: String, table: String },
    /// 1051
    #[error("Unknown table '{0}'")]
    UnknownTable(String),
    /// 1050
    #[error("Table '{0}' already exists")]
    TableExists(String),
    /// 1054
    #[error("Unknown column '{column}' in '{context}'")]
    UnknownColumn { column: String, context: String },
    /// 1052
    #[error("Column '{column}' in {context} is ambiguous")]
    AmbiguousColumn { column: String, context: String },
    /// 1060
    #[error("Duplicate column name '{0}'")]
    DuplicateColumn(String),
    /// 1061
    #[error("Duplicate key name '{0}'")]
    DuplicateKeyName(String),
    /// 1068
    #[error("Multiple primary key defined")]
    MultiplePrimaryKey,
    /// 1072
    #[error("Key column '{0}' doesn't exist in table")]
    KeyColumnMissing(String),
    /// 1075
    #[error(
        "Incorrect table definition; there can be only one auto column and it must be defined as a key"
    )]
    BadAutoIncrement,
    /// 1067
    #[error("Invalid default value for '{0}'")]
    InvalidDefault(String),
    /// 1091
    #[error("Can't DROP '{0}'; check that column/key exists")]
    CantDropKey(String),
    /// 1062
    #[error("Duplicate entry '{value}' for key '{key}'")]
    DuplicateEntry { value: String, key: String },
    /// 1136
    #[error("Column count doesn't match value count at row {0}")]
    ColumnCount(usize),
    /// 1048
    #[error("Column '{0}' cannot be null")]
    NotNull(String),
    /// 1364
    #[error("Field '{0}' doesn't have a default value")]
    NoDefault(String),
    /// 1264
    #[error("Out of range value for column '{column}' at row {row}")]
    OutOfRange { column: String, row: usize },
    /// 1366
    #[error("Incorrect {kind} value: '{value}' for column '{column}' at row {row}")]
    IncorrectValue {
        kind: &'static str,
        value: String,
        column: String,
        row: usize,
    },
    /// 1690
    #[error("{0}")]
    ValueOutOfRange(String),
    /// 1406
    #[error("Data too long for column '{column}' at row {row}")]
    DataTooLong { column: String, row: usize },
    /// 1096
    #[error("No tables used")]
    NoTablesUsed,
    /// 1110
    #[error("Column '{0}' specified twice")]
    ColumnTwice(String),
    /// 1111
    #[error("Invalid use of group function")]
    InvalidGroupFunction,
    /// 1055 (ONLY_FULL_GROUP_BY)
    #[error(
        "Expression #{0} of SELECT list is not in GROUP BY clause and contains nonaggregated column '{1}' which is not functionally dependent on columns in GROUP BY clause; this is incompatible with sql_mode=only_full_group_by"
    )]
    NotInGroupBy(usize, String),
    /// 1140 (ONLY_FULL_GROUP_BY, no GROUP BY)
    #[error(
        "In aggregated query without GROUP BY, expression #{0} of SELECT list contains nonaggregated column '{1}'; this is incompatible with sql_mode=only_full_group_by"
    )]
    MixedAggregate(usize, String),
    /// 1286
    #[error("Unknown storage engine '{0}'")]
    UnknownEngine(String),
    /// 1305
    #[error("FUNCTION {0} does not exist")]
    UnknownFunction(String),
    /// 1582
    #[error("Incorrect parameter count in the call to native function '{0}'")]
    WrongArgCount(String),
    /// 1210
    #[error("Incorrect arguments to {0}")]
    WrongArguments(String),
    /// 1213
    #[error("Deadlock found when trying to get lock; try restarting transaction")]
    Deadlock,
    /// 1205
    #[error("Lock wait timeout exceeded; try restarting transaction")]
    LockWaitTimeout,
    /// 3572: a locking read with NOWAIT met a row another transaction holds.
    #[error(
        "Statement aborted because lock(s) could not be acquired immediately and NOWAIT is set."
    )]
    LockNowait,
    /// 3568: `FOR UPDATE OF name` where name is not a table of the query.
    #[error("Unresolved table name `{0}` in locking clause.")]
    UnresolvedLockTable(String),
    /// 1235: valid SQL that Orcinus does not run (yet); names the statement or clause.
    #[error("This version of Orcinus doesn't yet support '{0}'")]
    NotSupported(String),
    /// 1295: the statement cannot be prepared; clients such as sysbench then fall back to
    /// text queries.
    #[error("This command is not supported in the prepared statement protocol yet")]
    UnsupportedInPreparedStatement,
    /// 1243: a prepared statement id that the session does not hold.
    #[error("Unknown prepared statement handler ({id}) given to {command}")]
    UnknownStatement {
        /// The id the client sent.
        id: u32,
        /// The command that used it (for example `mysqld_stmt_execute`).
        command: &'static str,
    },
    /// 1243: `EXECUTE` / `DEALLOCATE PREPARE` of a name the session has not prepared.
    #[error("Unknown prepared statement handler ({name}) given to {command}")]
    UnknownStatementName {
        /// The statement name as given.
        name: String,
        /// `EXECUTE` or `DEALLOCATE PREPARE`.
        command: &'static str,
    },
    /// 1193: `SELECT @@x` or `SET x = …` named a variable that does not exist.
    #[error("Unknown system variable '{0}'")]
    UnknownSystemVariable(String),
    /// 1231: `SET x = v` with a value the variable does not accept.
    #[error("Variable '{name}' can't be set to the value of '{value}'")]
    WrongValueForVariable {
        /// Variable name.
        name: String,
        /// The rejected value as text.
        value: String,
    },
    /// 1238: `SET x = …` on a variable that cannot be changed.
    #[error("Variable '{0}' is a read only variable")]
    ReadOnlyVariable(String),
    /// 1238: `@@global.x` of a SESSION-only variable or `@@session.x` of a GLOBAL-only one.
    #[error("Variable '{name}' is a {scope} variable")]
    WrongVariableScope {
        /// Variable name.
        name: String,
        /// `SESSION` or `GLOBAL`: the only scope the variable has.
        scope: &'static str,
    },
    /// 1228: `SET GLOBAL x` of a SESSION-only variable.
    #[error("Variable '{0}' is a SESSION variable and can't be used with SET GLOBAL")]
    SessionOnlyVariable(String),
    /// 1229: `SET [SESSION] x` of a GLOBAL-only variable.
    #[error("Variable '{0}' is a GLOBAL variable and should be set with SET GLOBAL")]
    GlobalOnlyVariable(String),
    /// 1621: `SET SESSION x` of a variable whose session value is read-only.
    #[error("SESSION variable '{0}' is read-only. Use SET GLOBAL to assign the value")]
    SessionReadOnlyVariable(String),
    /// 1232: `SET x = v` with a value of the wrong type (text for a number).
    #[error("Incorrect argument type to variable '{0}'")]
    WrongTypeForVariable(String),
    /// 1792: a write inside a READ ONLY transaction.
    #[error("Cannot execute statement in a READ ONLY transaction.")]
    ReadOnlyTransaction,
    /// 1568: `SET TRANSACTION …` (next transaction) while a transaction is open.
    #[error("Transaction characteristics can't be changed while a transaction is in progress")]
    TransactionInProgress,
    /// 1045: authentication failed (wrong password, unknown user, or no password from a
    /// remote host).
    #[error("Access denied for user '{user}'@'{host}' (using password: {})", if *using_password { "YES" } else { "NO" })]
    AccessDenied {
        /// The user name the client sent.
        user: String,
        /// The client host as the server sees it.
        host: String,
        /// Whether the client sent a non-empty password.
        using_password: bool,
    },
    /// 1396: an account statement failed for the listed accounts (`'u'@'h'`, comma-separated).
    #[error("Operation {operation} failed for {accounts}")]
    CannotUser {
        operation: &'static str,
        accounts: String,
    },
    /// 1227: the current user lacks a global privilege the statement needs.
    #[error("Access denied; you need (at least one of) the {0} privilege(s) for this operation")]
    SpecificAccessDenied(&'static str),
    /// 1044: the user has no privileges on the database.
    #[error("Access denied for user '{user}'@'{host}' to database '{db}'")]
    DbAccessDenied {
        user: String,
        host: String,
        db: String,
    },
    /// 1141: SHOW GRANTS / REVOKE named a grant that does not exist.
    #[error("There is no such grant defined for user '{user}' on host '{host}'")]
    NonexistingGrant { user: String, host: String },
    /// 1133: SET PASSWORD FOR an account that does not exist.
    #[error("Can't find any matching row in the user table")]
    PasswordNoMatch,
    /// 1410: GRANT to an account that does not exist (MySQL 8 never creates users in GRANT).
    #[error("You are not allowed to create a user with GRANT")]
    CantCreateUserWithGrant,
    /// 1524: IDENTIFIED WITH an authentication plugin Orcinus does not have.
    #[error("Plugin '{0}' is not loaded")]
    PluginNotLoaded(String),
    /// 1470: a user name or host name longer than MySQL allows.
    #[error("String '{value}' is too long for {what} (should be no longer than {max})")]
    WrongStringLength {
        value: String,
        what: &'static str,
        max: usize,
    },
    /// 1353
    #[error(
        "In definition of view, derived table or common table expression, SELECT list and column names list have different column counts"
    )]
    ViewColumnCount,
    /// 3170: an analytical query needed more memory than its budget (ER_CAPACITY_EXCEEDED).
    #[error("Memory capacity of {bytes} bytes for '{setting}' exceeded. {detail}")]
    MemoryCapacityExceeded {
        bytes: usize,
        setting: &'static str,
        detail: String,
    },
    /// 1105: the analytical executor rejected or failed a query for a reason with no more
    /// specific MySQL error (the message says why).
    #[error("{0}")]
    QueryFailed(String),
    /// 1317: KILL QUERY interrupted the statement; none of its writes were applied.
    #[error("Query execution was interrupted")]
    QueryInterrupted,
    /// 1094: KILL named a connection id that does not exist.
    #[error("Unknown thread id: {0}")]
    UnknownThread(u64),
    /// 1095: KILL of another user's connection without the admin privilege.
    #[error("You are not owner of thread {0}")]
    NotThreadOwner(u64),
    /// 1290: server-side LOAD DATA is disabled or outside `secure_file_priv`.
    #[error(
        "The MySQL server is running with the --secure-file-priv option so it cannot execute this statement"
    )]
    SecureFilePriv,
    /// 3948: LOAD DATA LOCAL while `local_infile` is off or the client did not enable it.
    #[error(
        "Loading local data is disabled; this must be enabled on both the client and server sides"
    )]
    LocalInfileDisabled,
    /// 29: LOAD DATA could not open its (server-side) file.
    #[error("File '{path}' not found (OS errno {errno} - {reason})")]
    FileNotFound {
        path: String,
        errno: i32,
        reason: String,
    },
    /// 1261: a LOAD DATA line has fewer fields than target columns (an error in strict mode).
    #[error("Row {0} doesn't contain data for all columns")]
    TooFewRecords(u64),
    /// 1262: a LOAD DATA line has more fields than target columns (an error in strict mode).
    #[error("Row {0} was truncated; it contained more data than there were input columns")]
    TooManyRecords(u64),
    /// 1263: LOAD DATA read NULL for a NOT NULL column (an error in strict mode).
    #[error(
        "Column set to default value; NULL supplied to NOT NULL column '{column}' at row {row}"
    )]
    NullToNotNull { column: String, row: usize },
    /// 1105: the storage engine failed (I/O, poisoned, shutting down).
    #[error("Storage engine error: {0}")]
    Storage(StorageError),
    /// 1105: a bug or corrupt data; never caused by user input alone.
    #[error("Internal error: {0}")]
    Internal(String),
}

impl SqlError {
    /// The MySQL error number.
    #[must_use]
    pub fn code(&self) -> u16 {
        match self {
            Self::Parse(_) | Self::Syntax { .. } => 1064,
            Self::NoDatabaseSelected => 1046,
            Self::EmptyQuery => 1065,
            Self::UnknownDatabase(_) => 1049,
            Self::DropMissingDatabase(_) => 1008,
            Self::DatabaseExists(_) => 1007,
            Self::NoSuchTable { .. } => 1146,
            Self::UnknownTable(_) => 1051,
            Self::TableExists(_) => 1050,
            Self::UnknownColumn { .. } => 1054,
            Self::AmbiguousColumn { .. } => 1052,
            Self::DuplicateColumn(_) => 1060,
            Self::DuplicateKeyName(_) => 1061,
            Self::MultiplePrimaryKey => 1068,
            Self::KeyColumnMissing(_) => 1072,
            Self::BadAutoIncrement => 1075,
            Self::InvalidDefault(_) => 1067,
            Self::CantDropKey(_) => 1091,
            Self::DuplicateEntry { .. } => 1062,
            Self::ColumnCount(_) => 1136,
            Self::NotNull(_) => 1048,
            Self::NoDefault(_) => 1364,
            Self::OutOfRange { .. } => 1264,
            Self::IncorrectValue { .. } => 1366,
            Self::DataTooLong { .. } => 1406,
            Self::ValueOutOfRange(_) => 1690,
            Self::ColumnTwice(_) => 1110,
            Self::NoTablesUsed => 1096,
            Self::InvalidGroupFunction => 1111,
            Self::NotInGroupBy(..) => 1055,
            Self::MixedAggregate(..) => 1140,
            Self::UnknownEngine(_) => 1286,
            Self::UnknownFunction(_) => 1305,
            Self::WrongArgCount(_) => 1582,
            Self::WrongArguments(_) => 1210,
            Self::Deadlock => 1213,
            Self::LockWaitTimeout => 1205,
            Self::LockNowait => 3572,
            Self::UnresolvedLockTable(_) => 3568,
            Self::NotSupported(_) => 1235,
            Self::UnsupportedInPreparedStatement => 1295,
            Self::UnknownStatement { .. } | Self::UnknownStatementName { .. } => 1243,
            Self::UnknownSystemVariable(_) => 1193,
            Self::WrongValueForVariable { .. } => 1231,
            Self::ReadOnlyVariable(_) | Self::WrongVariableScope { .. } => 1238,
            Self::SessionOnlyVariable(_) => 1228,
            Self::GlobalOnlyVariable(_) => 1229,
            Self::SessionReadOnlyVariable(_) => 1621,
            Self::WrongTypeForVariable(_) => 1232,
            Self::ReadOnlyTransaction => 1792,
            Self::TransactionInProgress => 1568,
            Self::AccessDenied { .. } => 1045,
            Self::CannotUser { .. } => 1396,
            Self::SpecificAccessDenied(_) => 1227,
            Self::DbAccessDenied { .. } => 1044,
            Self::NonexistingGrant { .. } => 1141,
            Self::PasswordNoMatch => 1133,
            Self::CantCreateUserWithGrant => 1410,
            Self::PluginNotLoaded(_) => 1524,
            Self::WrongStringLength { .. } => 1470,
            Self::MemoryCapacityExceeded { .. } => 3170,
            Self::ViewColumnCount => 1353,
            Self::QueryInterrupted => 1317,
            Self::UnknownThread(_) => 1094,
            Self::NotThreadOwner(_) => 1095,
            Self::SecureFilePriv => 1290,
            Self::LocalInfileDisabled => 3948,
            Self::FileNotFound { .. } => 29,
            Self::TooFewRecords(_) => 1261,
            Self::TooManyRecords(_) => 1262,
            Self::NullToNotNull { .. } => 1263,
            Self::Storage(_) | Self::Internal(_) | Self::QueryFailed(_) => 1105,
        }
    }

    /// The five-character SQLSTATE.
    #[must_use]
    pub fn sqlstate(&self) -> &'static str {
        match self {
            Self::Parse(_)
            | Self::Syntax { .. }
            | Self::EmptyQuery
            | Self::UnknownDatabase(_)
            | Self::TableExists(_)
            | Self::DuplicateColumn(_)
            | Self::DuplicateKeyName(_)
            | Self::MultiplePrimaryKey
            | Self::KeyColumnMissing(_)
            | Self::BadAutoIncrement
            | Self::InvalidDefault(_)
            | Self::CantDropKey(_)
            | Self::InvalidGroupFunction
            | Self::NotInGroupBy(..)
            | Self::MixedAggregate(..)
            | Self::UnknownEngine(_)
            | Self::UnknownFunction(_)
            | Self::WrongArgCount(_)
            | Self::NotSupported(_)
            | Self::WrongValueForVariable { .. }
            | Self::WrongTypeForVariable(_)
            | Self::SpecificAccessDenied(_)
            | Self::DbAccessDenied { .. }
            | Self::NonexistingGrant { .. }
            | Self::PasswordNoMatch
            | Self::CantCreateUserWithGrant
            | Self::LocalInfileDisabled => "42000",
            Self::QueryInterrupted => "70100",
            Self::TooFewRecords(_) | Self::TooManyRecords(_) => "01000",
            Self::NullToNotNull { .. } => "22004",
            Self::UnknownThread(_)
            | Self::NotThreadOwner(_)
            | Self::SecureFilePriv
            | Self::FileNotFound { .. } => "HY000",
            Self::AccessDenied { .. } => "28000",
            Self::NoDatabaseSelected => "3D000",
            Self::NoTablesUsed
            | Self::UnsupportedInPreparedStatement
            | Self::UnknownStatement { .. }
            | Self::UnknownStatementName { .. }
            | Self::UnknownSystemVariable(_)
            | Self::ReadOnlyVariable(_)
            | Self::WrongVariableScope { .. }
            | Self::SessionOnlyVariable(_)
            | Self::GlobalOnlyVariable(_)
            | Self::SessionReadOnlyVariable(_) => "HY000",
            Self::ReadOnlyTransaction => "25006",
            Self::TransactionInProgress => "25001",
            Self::NoSuchTable { .. } | Self::UnknownTable(_) => "42S02",
            Self::UnknownColumn { .. } | Self::ColumnTwice(_) => "42S22",
            Self::AmbiguousColumn { .. } => "23000",
            Self::DuplicateEntry { .. } | Self::NotNull(_) => "23000",
            Self::ColumnCount(_) => "21S01",
            Self::OutOfRange { .. } | Self::ValueOutOfRange(_) => "22003",
            Self::IncorrectValue { .. } => "HY000",
            Self::DataTooLong { .. } => "22001",
            Self::Deadlock => "40001",
            Self::DropMissingDatabase(_)
            | Self::DatabaseExists(_)
            | Self::NoDefault(_)
            | Self::WrongArguments(_)
            | Self::LockWaitTimeout
            | Self::LockNowait
            | Self::UnresolvedLockTable(_)
            | Self::CannotUser { .. }
            | Self::PluginNotLoaded(_)
            | Self::WrongStringLength { .. }
            | Self::Storage(_)
            | Self::MemoryCapacityExceeded { .. }
            | Self::ViewColumnCount
            | Self::QueryFailed(_)
            | Self::Internal(_) => "HY000",
        }
    }

    /// The coarse class of this error.
    #[must_use]
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::AccessDenied { .. }
            | Self::DbAccessDenied { .. }
            | Self::SpecificAccessDenied(_)
            | Self::NotThreadOwner(_)
            | Self::SecureFilePriv
            | Self::LocalInfileDisabled => ErrorKind::Access,
            Self::QueryInterrupted => ErrorKind::Interrupted,
            Self::UnknownThread(_) | Self::FileNotFound { .. } => ErrorKind::NotFound,
            Self::TooFewRecords(_) | Self::TooManyRecords(_) | Self::NullToNotNull { .. } => {
                ErrorKind::InvalidInput
            }
            Self::NonexistingGrant { .. } => ErrorKind::NotFound,
            Self::PluginNotLoaded(_) => ErrorKind::Unsupported,
            Self::CannotUser { .. }
            | Self::PasswordNoMatch
            | Self::CantCreateUserWithGrant
            | Self::WrongStringLength { .. } => ErrorKind::InvalidInput,
            Self::UnknownDatabase(_)
            | Self::DropMissingDatabase(_)
            | Self::NoSuchTable { .. }
            | Self::UnknownTable(_)
            | Self::UnknownColumn { .. }
            | Self::KeyColumnMissing(_)
            | Self::CantDropKey(_)
            | Self::UnknownEngine(_)
            | Self::UnknownFunction(_)
            | Self::NoDatabaseSelected
            | Self::UnknownStatement { .. }
            | Self::UnknownStatementName { .. }
            | Self::UnknownSystemVariable(_) => ErrorKind::NotFound,
            Self::DatabaseExists(_)
            | Self::TableExists(_)
            | Self::DuplicateColumn(_)
            | Self::DuplicateKeyName(_)
            | Self::DuplicateEntry { .. } => ErrorKind::AlreadyExists,
            Self::NotSupported(_) | Self::UnsupportedInPreparedStatement => ErrorKind::Unsupported,
            Self::Parse(_)
            | Self::Syntax { .. }
            | Self::EmptyQuery
            | Self::AmbiguousColumn { .. }
            | Self::MultiplePrimaryKey
            | Self::BadAutoIncrement
            | Self::InvalidDefault(_)
            | Self::ColumnCount(_)
            | Self::NotNull(_)
            | Self::NoDefault(_)
            | Self::OutOfRange { .. }
            | Self::IncorrectValue { .. }
            | Self::ValueOutOfRange(_)
            | Self::DataTooLong { .. }
            | Self::NoTablesUsed
            | Self::ColumnTwice(_)
            | Self::InvalidGroupFunction
            | Self::NotInGroupBy(..)
            | Self::MixedAggregate(..)
            | Self::WrongArgCount(_)
            | Self::WrongArguments(_)
            | Self::WrongValueForVariable { .. }
            | Self::WrongTypeForVariable(_)
            | Self::ReadOnlyVariable(_)
            | Self::WrongVariableScope { .. }
            | Self::SessionOnlyVariable(_)
            | Self::GlobalOnlyVariable(_)
            | Self::SessionReadOnlyVariable(_)
            | Self::ReadOnlyTransaction
            | Self::TransactionInProgress
            | Self::UnresolvedLockTable(_)
            | Self::ViewColumnCount
            | Self::QueryFailed(_)
            | Self::MemoryCapacityExceeded { .. } => ErrorKind::InvalidInput,
            Self::Deadlock | Self::LockWaitTimeout | Self::LockNowait => ErrorKind::Conflict,
            Self::Storage(_) => ErrorKind::Storage,
            Self::Internal(_) => ErrorKind::Internal,
        }
    }

    /// True for the errors after which the whole transaction has been rolled back: a deadlock.
    /// A lock wait timeout undoes only the failed statement (InnoDB with
    /// `innodb_rollback_on_timeout=OFF`, MySQL's default), like any other failed statement.
    #[must_use]
    pub fn rolls_back_transaction(&self) -> bool {
        matches!(self, Self::Deadlock)
    }

    pub(crate) fn unsupported(what: impl Into<String>) -> Self {
        Self::NotSupported(what.into())
    }
}

impl From<StorageError> for SqlError {
    fn from(e: StorageError) -> Self {
        match e.kind() {
            StorageErrorKind::Deadlock => Self::Deadlock,
            StorageErrorKind::LockWaitTimeout => Self::LockWaitTimeout,
            StorageErrorKind::Interrupted => Self::QueryInterrupted,
            _ => Self::Storage(e),
        }
    }
}

impl From<CodecError> for SqlError {
    fn from(e: CodecError) -> Self {
        Self::Internal(format!("stored data: {e}"))
    }
}

/// Coarse classification of [`SqlError`] for protocols other than MySQL, and for logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Authentication or authorization failure.
    Access,
    /// A named object (database, table, column, statement, variable) does not exist.
    NotFound,
    /// An object or key that must be unique already exists.
    AlreadyExists,
    /// Valid input that Orcinus does not support (yet).
    Unsupported,
    /// Malformed or invalid input: syntax, arguments, values, constraints.
    InvalidInput,
    /// A retryable transaction conflict: a deadlock (the transaction is gone) or a lock wait
    /// timeout (only the statement is undone).
    Conflict,
    /// The storage engine failed or is unavailable.
    Storage,
    /// The statement was interrupted (KILL QUERY); the session and transaction remain.
    Interrupted,
    /// A bug in Orcinus.
    Internal,
}

/// Result alias for the SQL crate.
pub type SqlResult<T> = Result<T, SqlError>;
