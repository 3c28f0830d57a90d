//! Redis data types and commands over the storage engine (see DESIGN.md).
