//! SQL layer: catalog, binder, fast-path executor, DataFusion integration (see DESIGN.md).
