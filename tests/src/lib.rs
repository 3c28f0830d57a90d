//! Integration tests live in tests/integration; this crate has no library code.
