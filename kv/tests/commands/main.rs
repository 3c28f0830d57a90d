//! Command tests against a real temporary engine: every command group, with its error cases
//! and Redis error strings. One test binary (modules below) to keep link time down.

mod connection;
mod generic;
mod harness;
mod hashes;
mod server;
mod strings;
mod sweeper;
mod transactions;
