//! SQL layer: catalog, binder, fast-path executor, DataFusion integration (see DESIGN.md).
//!
//! Storage layout of tables and indexes is specified in `sql/FORMAT.md`.

pub mod codec;
pub mod types;
