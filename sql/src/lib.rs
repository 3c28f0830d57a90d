//! SQL layer: catalog, binder, fast-path executor, DataFusion integration (see DESIGN.md).
//!
//! Storage layout of tables and indexes is specified in `sql/FORMAT.md`.
//!
//! Public entry points for the protocol layer: [`SqlEngine`] (open, execute, prepare,
//! execute_prepared), [`SqlSession`] (per-connection state), [`StatementResult`] /
//! [`OutputColumn`] (results), [`SqlError`] (code, SQLSTATE, message).

pub mod access;
pub mod aggregate;
pub mod bind;
pub mod catalog;
pub mod codec;
pub mod coerce;
pub mod ddl;
pub mod dml;
pub mod engine;
pub mod error;
pub mod expr;
pub mod plan;
pub mod result;
pub mod rowio;
pub mod select;
pub mod stmt_ctx;
pub mod types;
pub mod value;
pub mod write;

pub use engine::{PreparedStatement, SqlEngine, SqlSession};
pub use error::SqlError;
pub use result::{OutputColumn, StatementResult};
pub use types::{Datum, SqlType};
#[cfg(test)]
mod tests;
