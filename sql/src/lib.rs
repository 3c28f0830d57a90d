//! SQL layer: catalog, binder, fast-path executor, DataFusion integration (see DESIGN.md).
//!
//! Names, from the protocol boundary down:
//! - [`session`]: the boundary the MySQL front door calls. Traits `session::SqlEngine` (shared)
//!   and `session::SqlSession` (one connection), boundary types (`session::Value`,
//!   `session::ColumnDef`, outcomes).
//! - [`SqlExecutor`] / [`SessionState`] / [`PreparedPlan`] (`engine.rs`): the statement executor
//!   over catalog and storage, with one connection's execution state.
//! - [`SqlError`] (`error.rs`): the crate's one error type, carrying MySQL code and SQLSTATE.
//! - [`Datum`] is the engine's value; `session::Value` the boundary's.
//!
//! Storage layout of tables, indexes and the catalog is specified in `sql/FORMAT.md`.

pub mod access;
pub mod accounts;
pub mod admission;
pub mod aggregate;
pub mod analytics;
pub mod bind;
pub mod catalog;
pub mod codec;
pub mod coerce;
pub mod ddl;
pub mod dml;
pub mod engine;
pub mod error;
pub mod expr;
pub mod information_schema;
pub mod load;
pub mod order;
pub mod plan;
pub mod result;
pub mod rowio;
pub mod select;
pub mod session;
pub mod show;
mod sql_text;
pub mod stmt_ctx;
pub mod table_versions;
pub mod types;
pub mod value;
pub mod write;

pub use engine::{PreparedPlan, SessionState, SqlExecutor};
pub use error::{ErrorKind, SqlError};
pub use result::{OutputColumn, StatementResult};
pub use types::{Datum, SqlType};
#[cfg(test)]
mod tests;
