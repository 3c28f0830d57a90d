//! The session boundary between the wire protocols in `server` and the SQL engine.
//!
//! A protocol reaches SQL only through [`SqlEngine`] and [`SqlSession`], so the MySQL front door
//! is tested against a fake engine and the engine is tested without a socket. The types here
//! carry no wire encoding: column metadata is MySQL's (type, collation, length, decimals,
//! flags), values are typed, errors are the crate's one [`SqlError`], which the protocol maps to wire
//! codes in one place.
//!
//! [`BootstrapEngine`] is the engine the server runs until the SQL layer exists: it answers
//! only what session state answers honestly and rejects every other statement explicitly.

mod bootstrap;
mod column;
mod credentials;
mod outcome;
mod probe;
mod sql_text;
mod traits;
mod value;
mod variables;

pub use crate::error::{ErrorKind, SqlError, SqlResult};
pub use bootstrap::{BootstrapEngine, BootstrapSession};
pub use column::{
    COLLATION_BINARY, COLLATION_UTF8MB4_0900_AI_CI, ColumnDef, ColumnFlags, ColumnType,
    UTF8MB4_MAX_BYTES_PER_CHAR,
};
pub use credentials::{Account, Credentials, PasswordHashes};
pub use outcome::{
    ExecutedStatement, OkSummary, PreparedStatement, QueryOutcome, ResultSet, SessionStatus,
    StatementId,
};
pub use traits::{QueryResponse, SessionContext, SqlEngine, SqlSession};
pub use value::{Date, DateTime, Time, Value};
pub use variables::{SessionVariables, VariableDefaults, VariableValue};
