//! SQL layer: catalog, binder, fast-path executor, DataFusion integration (see DESIGN.md).
//!
//! Today it holds the session boundary ([`session`]) that the MySQL front door calls.

pub mod session;
