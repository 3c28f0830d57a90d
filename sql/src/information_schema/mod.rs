//! information_schema: the virtual database MySQL clients and tools read metadata from, computed
//! on every query from one catalog snapshot (nothing is stored). It holds the views SCHEMATA,
//! TABLES, COLUMNS, STATISTICS, TABLE_CONSTRAINTS, KEY_COLUMN_USAGE, CHARACTER_SETS, COLLATIONS,
//! ENGINES and PROCESSLIST (whose rows the session supplies: the server's sessions) with MySQL
//! 8.0's columns, and lists itself among the databases.
//!
//! Layout: `views.rs` defines the views' columns, `rows.rs` computes their rows, `metadata.rs`
//! holds how MySQL describes columns and keys (shared with the SHOW statements, which are
//! projections of these views), `charsets.rs` the known character sets and collations, and
//! `query.rs` runs `SELECT … FROM information_schema.<view>` through the ordinary SELECT binder
//! and executor.
//!
//! Entry points: [`execute_query`] (None when the query reads no view) and [`describe_query`] for
//! prepared statements. Both are reached through `crate::show::execute_show`.

pub mod charsets;
pub mod metadata;
pub mod query;
pub mod rows;
pub mod views;

pub use query::{describe_query, execute_query, execute_query_with, reads_information_schema};
pub use views::{INFORMATION_SCHEMA, SystemView, is_information_schema};
