//! SQL layer: catalog, binder, fast-path executor, DataFusion integration (see DESIGN.md).
//!
//! [`session`] is the boundary the MySQL front door calls; storage layout of tables and indexes is
//! specified in `sql/FORMAT.md` and implemented in [`codec`].

pub mod codec;
pub mod session;
pub mod types;
