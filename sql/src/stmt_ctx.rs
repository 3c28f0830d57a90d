//! [`StmtCtx`]: one statement's view of the transaction, giving statement atomicity.
//!
//! Chosen design: writes of a statement are BUFFERED here (key → new value or deletion) and
//! applied to the storage transaction only when the statement succeeds ([`StmtCtx::apply`]);
//! a failed statement drops its buffer, so earlier statements' writes stay intact and none of
//! its own survive. Locks are taken on the storage transaction immediately (before the write is
//! buffered) and, as in InnoDB, stay held until the transaction ends even if the statement fails.
//!
//! Reads through the context see the statement's own buffered writes first. Range scans are not
//! overlaid: DML collects its target rows before writing any of them.

use crate::error::SqlResult;
use orcinus_storage::{Direction, Keyspace, ScanIter, StorageError, Transaction};
use std::collections::BTreeMap;
use std::ops::Bound;

/// A statement's buffered writes over a transaction.
pub struct StmtCtx<'a> {
    txn: &'a mut Transaction,
    ks: Keyspace,
    pending: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
}

impl<'a> StmtCtx<'a> {
    /// A context over `txn` writing into keyspace `ks`.
    pub fn new(txn: &'a mut Transaction, ks: Keyspace) -> Self {
        Self {
            txn,
            ks,
            pending: BTreeMap::new(),
        }
    }

    /// Consistent read (statement writes, then the transaction's snapshot and own writes).
    pub fn get(&self, key: &[u8]) -> SqlResult<Option<Vec<u8>>> {
        if let Some(v) = self.pending.get(key) {
            return Ok(v.clone());
        }
        Ok(self.txn.get(&self.ks, key)?.map(|s| s.to_vec()))
    }

    /// Consistent read like [`StmtCtx::get`], handing the value to `f` instead of copying it.
    pub fn get_with<R>(
        &self,
        key: &[u8],
        f: impl FnOnce(&[u8]) -> SqlResult<R>,
    ) -> SqlResult<Option<R>> {
        if let Some(v) = self.pending.get(key) {
            return v.as_deref().map(f).transpose();
        }
        match self.txn.get(&self.ks, key)? {
            Some(v) => f(&v).map(Some),
            None => Ok(None),
        }
    }

    /// [`StmtCtx::get_with`] answered only from buffered writes, the transaction's own writes
    /// and the storage point cache: `Ok(None)` when the value is not at hand that way (read
    /// it with `get_with`); `Ok(Some(None))` when the key is known to be absent.
    pub fn get_cached_with<R>(
        &self,
        key: &[u8],
        f: impl FnOnce(&[u8]) -> SqlResult<R>,
    ) -> SqlResult<Option<Option<R>>> {
        if let Some(v) = self.pending.get(key) {
            return v.as_deref().map(f).transpose().map(Some);
        }
        match self.txn.get_cached(&self.ks, key) {
            Some(Some(v)) => f(&v).map(|r| Some(Some(r))),
            Some(None) => Ok(Some(None)),
            None => Ok(None),
        }
    }

    /// Locking read: takes the key's lock, then reads the latest committed version (or ours).
    pub async fn get_for_update(&mut self, key: &[u8]) -> SqlResult<Option<Vec<u8>>> {
        self.txn.lock(&self.ks, key).await?;
        if let Some(v) = self.pending.get(key) {
            return Ok(v.clone());
        }
        Ok(self.txn.get_latest(&self.ks, key)?.map(|s| s.to_vec()))
    }

    /// [`StmtCtx::get_for_update`] that does not wait: `Ok(None)` if another transaction
    /// holds the key's lock (NOWAIT, SKIP LOCKED).
    pub async fn try_get_for_update(&mut self, key: &[u8]) -> SqlResult<Option<Option<Vec<u8>>>> {
        self.txn.set_lock_wait(false);
        let locked = self.txn.lock(&self.ks, key).await;
        self.txn.set_lock_wait(true);
        match locked {
            Ok(()) => {}
            Err(StorageError::WouldWait) => return Ok(None),
            Err(e) => return Err(e.into()),
        }
        if let Some(v) = self.pending.get(key) {
            return Ok(Some(v.clone()));
        }
        Ok(Some(
            self.txn.get_latest(&self.ks, key)?.map(|s| s.to_vec()),
        ))
    }

    /// Locks `key` and buffers `value` for it.
    pub async fn put(&mut self, key: Vec<u8>, value: Vec<u8>) -> SqlResult<()> {
        self.txn.lock(&self.ks, &key).await?;
        self.pending.insert(key, Some(value));
        Ok(())
    }

    /// Locks `key` and buffers its deletion.
    pub async fn delete(&mut self, key: Vec<u8>) -> SqlResult<()> {
        self.txn.lock(&self.ks, &key).await?;
        self.pending.insert(key, None);
        Ok(())
    }

    /// Consistent scan of the transaction's view (without this statement's buffered writes).
    pub fn scan(&self, lower: Bound<&[u8]>, upper: Bound<&[u8]>, direction: Direction) -> ScanIter {
        self.txn.scan(&self.ks, lower, upper, direction)
    }

    /// Number of buffered writes.
    #[must_use]
    pub fn pending_len(&self) -> usize {
        self.pending.len()
    }

    /// Applies the buffered writes to the transaction (the statement succeeded). The locks are
    /// already held, so this does not wait.
    pub async fn apply(self) -> SqlResult<()> {
        for (k, v) in self.pending {
            match v {
                Some(v) => self.txn.put(&self.ks, &k, v).await?,
                None => self.txn.delete(&self.ks, &k).await?,
            }
        }
        Ok(())
    }
}
