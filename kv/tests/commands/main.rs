//! Command tests against a real temporary engine: every command group, with its error cases
//! and Redis error strings. One test binary (modules below) to keep link time down.

// A test-only crate: helpers outside #[test] fns may unwrap and panic like the tests do.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod account_auth;
mod bitmaps;
mod connection;
mod dump_fuzz;
mod dump_restore;
mod dump_vectors;
mod generic;
mod harness;
mod hash_ttl;
mod hashes;
mod list_blocking;
mod list_model;
mod lists;
mod model;
mod server;
mod sets;
mod strings;
mod sweeper;
mod transactions;
mod write_group;
mod zset_model;
mod zset_writes;
mod zsets;
