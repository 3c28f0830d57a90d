//! The session boundary between the wire protocols in `server` and the SQL engine.
//!
//! A protocol reaches SQL only through [`SqlEngine`] and [`SqlSession`], so the MySQL front door
//! is tested against a fake engine and the engine is tested without a socket. The types here
//! carry no wire encoding: column metadata is MySQL's (type, collation, length, decimals,
//! flags), values are typed, errors are the crate's one [`SqlError`], which the protocol maps to wire
//! codes in one place.
//!
//! [`SqlFrontend`] is the engine the server serves: it routes each statement once
//! (`dispatch.rs`) to the session-state answers (`answers.rs`, from the typed variable store in
//! `variables.rs`), the metadata and account modules, LOAD DATA (`load_data.rs`), KILL and the
//! process list (`kill.rs`, `processlist.rs`), or the executor ([`crate::SqlExecutor`], after
//! `functions.rs` has replaced session functions and user variables by their values; a text
//! `INSERT … VALUES` of literals runs a plan kept per session for its shape, `text_plans.rs`).
//! Prepared statements take the same routes (`frontend.rs`), so every statement the text protocol
//! answers gives the same answer prepared, except `USE` and `LOAD DATA` (1295, as in MySQL);
//! SQL-level `PREPARE` / `EXECUTE` / `DEALLOCATE PREPARE` (`sql_prepare.rs`) use the same table.
//! Executor values and columns cross the boundary through one conversion (`convert.rs`).

mod answers;
mod column;
mod convert;
mod credentials;
mod dispatch;
mod frontend;
mod functions;
mod kill;
mod load_data;
mod outcome;
mod prepared;
mod probe;
mod processlist;
mod sql_prepare;
#[cfg(test)]
mod tests;
mod text_plans;
mod traits;
mod value;
mod variables;

pub use crate::error::{ErrorKind, SqlError, SqlResult};
pub use column::{
    COLLATION_BINARY, COLLATION_UTF8MB4_0900_AI_CI, ColumnDef, ColumnFlags, ColumnType,
    UTF8MB4_MAX_BYTES_PER_CHAR,
};
pub use credentials::{Account, Credentials, PasswordHashes};
pub use frontend::{FrontendSession, SqlFrontend};
pub use outcome::{
    ExecutedStatement, OkSummary, PreparedStatement, QueryOutcome, ResultSet, SessionStatus,
    StatementId,
};
pub use traits::{
    LocalInfile, NoLocalInfile, QueryResponse, SessionContext, SessionTimeouts, SqlEngine,
    SqlSession,
};
pub use value::{Date, DateTime, Time, Value};
pub use variables::{SessionVariables, VariableDefaults, VariableValue};
