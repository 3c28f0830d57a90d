//! SQL layer: catalog, binder, fast-path executor, DataFusion integration (see DESIGN.md).
//!
//! [`session`] is the boundary the MySQL front door calls today (handler traits, boundary types,
//! and the bootstrap engine that answers session-state probes). The engine modules (catalog,
//! DDL, the fast-path executor and transactions: [`SqlEngine`], [`SqlSession`],
//! [`StatementResult`], [`error::SqlError`]) are complete as a library but NOT yet wired to the
//! port. Joining the halves is the next step: one `SqlError` for the crate, the `session` traits
//! implemented over [`SqlEngine`], one value type at the boundary.
//!
//! Storage layout of tables, indexes and the catalog is specified in `sql/FORMAT.md`.

pub mod access;
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
pub mod plan;
pub mod result;
pub mod rowio;
pub mod select;
pub mod session;
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
