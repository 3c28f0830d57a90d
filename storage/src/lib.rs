//! Orcinus storage engine: named keyspaces of ordered byte keys on an LSM tree (fjall), with
//! consistent snapshots, atomic write batches, transactions with pessimistic per-key locks and
//! deadlock detection, and a group-commit pipeline that owns durability.
//!
//! Invariants every caller may rely on:
//! - A commit (batch or transaction) returns `Ok` only after it is durable under the configured
//!   [`SyncPolicy`]; under `Always` that means after an fdatasync covering it. The deferred form
//!   (`commit_deferred`) applies the commit at once and returns a [`DurabilityTicket`] that
//!   resolves at that same point; nothing may be acknowledged before it does. A ticket can
//!   also run a callback at that point (`DurabilityTicket::on_durable`), e.g. to send a reply
//!   without waking the task that made the commit.
//! - After a failed sync the engine is poisoned: all later writes fail with
//!   [`StorageError::Poisoned`] and [`Engine::poisoned`] resolves; the server must exit.
//! - No LSM type appears in this API; only this crate names fjall.

mod batch;
mod carried_hash;
mod config;
mod engine;
mod error;
mod group_commit;
mod interrupt;
mod journal_sync;
mod lock_manager;
mod point_cache;
mod slice;
mod snapshot;
mod transaction;

pub use batch::WriteBatch;
pub use group_commit::{DurabilityTicket, DurableCallback};
pub use interrupt::{Interrupt, interruptible};

/// Longest key the engine stores (the LSM's limit).
pub const MAX_KEY_LEN: usize = 65_535;
/// Largest value the engine stores (the LSM's limit is 4 GiB; we stay below it).
pub const MAX_VALUE_LEN: usize = u32::MAX as usize;

/// Checks a key/value pair against the engine's limits (the LSM asserts on them).
pub(crate) fn check_entry(key: &[u8], value_len: usize) -> Result<()> {
    if key.is_empty() {
        return Err(StorageError::InvalidKey("empty key"));
    }
    if key.len() > MAX_KEY_LEN {
        return Err(StorageError::InvalidKey("key longer than 65535 bytes"));
    }
    if value_len > MAX_VALUE_LEN {
        return Err(StorageError::InvalidKey("value larger than 4 GiB"));
    }
    Ok(())
}
pub use config::{StorageConfig, SyncPolicy};
pub use engine::{Engine, EngineStats, Keyspace, KeyspaceOptions};
pub use error::{ErrorKind, Result, StorageError};
pub use slice::Slice;
pub use snapshot::{KvIter, KvPair, Snapshot, prefix_upper_bound};
pub use transaction::{Direction, Savepoint, ScanIter, Transaction};

#[cfg(test)]
mod tests;
