//! [`TableVersions`]: a per-table commit counter, so a reader can tell exactly which version of
//! a table its storage snapshot sees (the analytical column cache, `analytics/column_cache.rs`,
//! is valid only for readers that see the version it was built from).
//!
//! Protocol (all under one mutex):
//! - a commit that writes rows of table `t` raises `committing[t]` before its batch is applied
//!   and, once the batch is applied (visible to new snapshots), raises `version[t]` and lowers
//!   `committing[t]` ([`TableVersions::commit`], [`TableVersions::commit_batch`]);
//! - a reader takes its storage snapshot while holding the mutex
//!   ([`TableVersions::snapshot`]); for every table with `committing[t] == 0` at that moment the
//!   snapshot sees exactly the first `version[t]` commits to `t`: each counted commit was applied
//!   before the count was raised, and a commit applied before the snapshot but not yet counted
//!   would still have `committing[t]` raised.
//!
//! Invariants: every committed write to a row key `'r' · table id` goes through one of the two
//! commit functions (SQL DML, LOAD DATA and the TPC-H loader through [`crate::Catalog::commit_txn`],
//! DDL that deletes rows through [`crate::Catalog::commit_dropping`]). Versions live in memory and
//! start at 0 when the server starts; table ids are never reused, so a dropped or truncated
//! table's id never names other rows.

use crate::codec::key;
use crate::error::SqlResult;
use orcinus_storage::{Engine, Keyspace, Snapshot, Transaction, WriteBatch};
use parking_lot::Mutex;
use std::collections::HashMap;

#[derive(Debug, Default, Clone, Copy)]
struct Counter {
    version: u64,
    committing: u32,
}

/// Commit counters of all tables written since the server started.
#[derive(Debug, Default)]
pub struct TableVersions {
    tables: Mutex<HashMap<u32, Counter>>,
}

/// The tables whose version a snapshot sees exactly, with that version (tables absent from
/// [`SnapshotVersions::exact`]'s map and not in `uncertain` were never written: version 0).
#[derive(Debug, Clone, Default)]
pub struct SnapshotVersions {
    versions: HashMap<u32, u64>,
    uncertain: Vec<u32>,
}

impl SnapshotVersions {
    /// The version of `table` the snapshot sees, or `None` when a commit to it was in flight
    /// while the snapshot was taken.
    #[must_use]
    pub fn exact(&self, table: u32) -> Option<u64> {
        if self.uncertain.contains(&table) {
            return None;
        }
        Some(self.versions.get(&table).copied().unwrap_or(0))
    }
}

/// The ids of the tables whose rows `txn` writes in `data` (ascending, distinct).
fn written_tables(txn: &Transaction, data: &Keyspace) -> Vec<u32> {
    let mut tables = Vec::new();
    let mut from = vec![key::ROW_TAG];
    while let Some(k) = txn.first_written_key(data, &from) {
        let Some((&key::ROW_TAG, rest)) = k.split_first() else {
            break;
        };
        let Some(id) = rest.first_chunk::<4>().map(|b| u32::from_be_bytes(*b)) else {
            break;
        };
        tables.push(id);
        match id.checked_add(1) {
            Some(next) => from = key::row_prefix(next),
            None => break,
        }
    }
    tables
}

impl TableVersions {
    /// A storage snapshot of `engine` and the table versions it sees.
    pub fn snapshot(&self, engine: &Engine) -> (Snapshot, SnapshotVersions) {
        let tables = self.tables.lock();
        let snap = engine.snapshot();
        let mut seen = SnapshotVersions::default();
        for (&id, c) in tables.iter() {
            if c.committing > 0 {
                seen.uncertain.push(id);
            } else {
                seen.versions.insert(id, c.version);
            }
        }
        (snap, seen)
    }

    /// The current version of `table` (tests and diagnostics).
    #[must_use]
    pub fn current(&self, table: u32) -> u64 {
        self.tables.lock().get(&table).map_or(0, |c| c.version)
    }

    fn begin(&self, tables: &[u32]) {
        let mut map = self.tables.lock();
        for t in tables {
            map.entry(*t).or_default().committing += 1;
        }
    }

    /// Counts the commit whether or not it succeeded: a failed apply may have been partly
    /// visible, and a spurious version change only costs a cache miss.
    fn end(&self, tables: &[u32]) {
        let mut map = self.tables.lock();
        for t in tables {
            let c = map.entry(*t).or_default();
            c.version += 1;
            c.committing = c.committing.saturating_sub(1);
        }
    }

    /// Commits `txn` durably, counting a new version of every table whose rows it writes in
    /// `data`.
    pub async fn commit(&self, data: &Keyspace, txn: Transaction) -> SqlResult<()> {
        let tables = written_tables(&txn, data);
        if tables.is_empty() {
            txn.commit().await?;
            return Ok(());
        }
        self.begin(&tables);
        let applied = txn.commit_deferred();
        self.end(&tables);
        applied?.wait().await?;
        Ok(())
    }

    /// Commits `batch` durably, counting a new version of each of `tables` (the tables whose
    /// rows the batch writes or deletes).
    pub async fn commit_batch(&self, batch: WriteBatch, tables: &[u32]) -> SqlResult<()> {
        self.begin(tables);
        let applied = batch.commit_deferred();
        self.end(tables);
        applied?.wait().await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use orcinus_storage::StorageConfig;

    #[tokio::test]
    async fn commits_raise_the_versions_of_the_tables_they_write() {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::open(StorageConfig::for_test(dir.path().to_path_buf())).unwrap();
        let data = engine.keyspace("data").unwrap();
        let versions = TableVersions::default();
        let mut txn = engine.begin();
        for t in [3u32, 9, u32::MAX] {
            let mut k = key::row_prefix(t);
            k.push(1);
            txn.put(&data, &k, b"v".to_vec()).await.unwrap();
        }
        txn.put(&data, &key::index_prefix(4), b"i".to_vec())
            .await
            .unwrap();
        assert_eq!(written_tables(&txn, &data), vec![3, 9, u32::MAX]);
        let (_, before) = versions.snapshot(&engine);
        versions.commit(&data, txn).await.unwrap();
        let (_, after) = versions.snapshot(&engine);
        assert_eq!(
            (before.exact(3), after.exact(3), after.exact(4)),
            (Some(0), Some(1), Some(0))
        );
        versions.begin(&[9]);
        let (_, during) = versions.snapshot(&engine);
        assert_eq!((during.exact(9), during.exact(3)), (None, Some(1)));
        // A transaction that writes nothing in the row family counts nothing.
        let txn = engine.begin();
        versions.commit(&data, txn).await.unwrap();
        assert_eq!(versions.current(3), 1);
    }
}
