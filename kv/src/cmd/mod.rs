//! Command handlers, one module per Redis command group. Handlers validate every argument
//! before they write anything, so an error reply never leaves a partial write behind.

pub mod bitmaps;
pub mod connection;
pub mod dump_restore;
pub mod generic;
pub mod hash_ttl;
pub mod hashes;
pub mod introspection;
pub mod list_blocking;
pub mod list_edit;
pub mod list_move;
pub mod lists;
pub mod server;
pub mod set_algebra;
pub mod sets;
pub mod strings;
pub mod zset_range_args;
pub mod zset_ranges;
pub mod zset_store;
pub mod zsets;
