//! Pessimistic exclusive per-key locks for writers, with wait-for-graph deadlock detection and
//! a lock-wait timeout.
//!
//! Each lock has one holder and a FIFO queue of waiters. A transaction waits on at most one lock
//! at a time, so the wait-for graph is followed as: waiter → holder of the lock it waits on →
//! the lock that holder waits on → … A new wait that would reach the requester again is refused
//! with [`StorageError::Deadlock`] (the requester is the victim). Grants only ever point waiters at
//! a running transaction, which has no outgoing edge, so checking at wait time finds every cycle.
//!
//! A key is hashed once, when its [`LockKey`] is made ([`LockManager::key`], a keyed hash with a
//! per-process seed); the table and the holder's release reuse that hash.

use crate::Slice;
use crate::carried_hash::CarriedHash;
use crate::error::{Result, StorageError};
use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasher, Hash, Hasher};
use std::time::Duration;
use tokio::sync::oneshot;

/// Identifies a transaction.
pub(crate) type TxnId = u64;

/// A lock's identity: keyspace id and key bytes, with the key's hash carried along. The key is
/// shared with the transaction's write set (one allocation by its writer, if any: short keys are
/// stored inline in the [`Slice`]).
#[derive(Clone)]
pub(crate) struct LockKey {
    hash: u64,
    ks: u32,
    key: Slice,
}

impl PartialEq for LockKey {
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash && self.ks == other.ks && self.key == other.key
    }
}

impl Eq for LockKey {}

impl Hash for LockKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

struct LockEntry {
    holder: TxnId,
    waiters: VecDeque<(TxnId, oneshot::Sender<()>)>,
}

#[derive(Default)]
struct Inner {
    locks: HashMap<LockKey, LockEntry, CarriedHash>,
    waiting_on: HashMap<TxnId, LockKey>,
}

impl Inner {
    /// Records `txn` as the holder of a key nobody holds.
    fn grant_new(&mut self, txn: TxnId, key: &LockKey) {
        self.locks.insert(
            key.clone(),
            LockEntry {
                holder: txn,
                waiters: VecDeque::new(),
            },
        );
    }
}

pub(crate) struct LockManager {
    inner: Mutex<Inner>,
    timeout: Duration,
    /// Keyed (seeded at random per lock manager), like the point cache's: a client cannot
    /// choose keys that collide without knowing the seed; foldhash costs a fraction of
    /// SipHash on the short keys every write locks.
    hasher: foldhash::fast::RandomState,
}

impl LockManager {
    pub(crate) fn new(timeout: Duration) -> Self {
        Self {
            inner: Mutex::new(Inner::default()),
            timeout,
            hasher: foldhash::fast::RandomState::default(),
        }
    }

    /// The lock identity of `key` in keyspace `ks` (hashes the key once).
    pub(crate) fn key(&self, ks: u32, key: Slice) -> LockKey {
        LockKey {
            hash: self.hasher.hash_one(&*key),
            ks,
            key,
        }
    }

    /// Acquires `key` for `txn` if that needs no wait. Returns `Ok(true)` if newly acquired,
    /// `Ok(false)` if `txn` already held it, and [`StorageError::WouldWait`] (acquiring
    /// nothing) if another transaction holds it.
    pub(crate) fn try_acquire(&self, txn: TxnId, key: &LockKey) -> Result<bool> {
        let mut inner = self.inner.lock();
        match inner.locks.get(key) {
            None => {
                inner.grant_new(txn, key);
                Ok(true)
            }
            Some(e) if e.holder == txn => Ok(false),
            Some(_) => Err(StorageError::WouldWait),
        }
    }

    /// The engine's lock-wait timeout (transactions without their own use it).
    pub(crate) fn default_timeout(&self) -> Duration {
        self.timeout
    }

    /// Acquires `key` for `txn`, waiting at most the engine's lock-wait timeout. Returns
    /// `Ok(true)` if newly acquired, `Ok(false)` if `txn` already held it.
    #[cfg(test)]
    pub(crate) async fn acquire(&self, txn: TxnId, key: &LockKey) -> Result<bool> {
        self.acquire_within(txn, key, self.timeout).await
    }

    /// Acquires `key` for `txn`, waiting at most `timeout` (a session's
    /// `innodb_lock_wait_timeout`). Returns `Ok(true)` if newly acquired, `Ok(false)` if `txn`
    /// already held it.
    pub(crate) async fn acquire_within(
        &self,
        txn: TxnId,
        key: &LockKey,
        timeout: Duration,
    ) -> Result<bool> {
        let rx = {
            let mut inner = self.inner.lock();
            let holder = match inner.locks.get(key) {
                None => {
                    inner.grant_new(txn, key);
                    return Ok(true);
                }
                Some(e) if e.holder == txn => return Ok(false),
                Some(e) => e.holder,
            };
            if inner.reaches(holder, txn) {
                return Err(StorageError::Deadlock);
            }
            let (tx, rx) = oneshot::channel();
            if let Some(entry) = inner.locks.get_mut(key) {
                entry.waiters.push_back((txn, tx));
            }
            inner.waiting_on.insert(txn, key.clone());
            rx
        };
        // A fired interrupt (KILL QUERY) ends the wait like a timeout does: the cleanup below
        // removes this waiter, and the caller's statement fails with `Interrupted`.
        let granted = crate::interrupt::interruptible(tokio::time::timeout(timeout, rx)).await;
        let mut inner = self.inner.lock();
        inner.waiting_on.remove(&txn);
        let holds = inner.locks.get(key).is_some_and(|e| e.holder == txn);
        if holds {
            return Ok(true);
        }
        if let Some(entry) = inner.locks.get_mut(key) {
            entry.waiters.retain(|(w, _)| *w != txn);
        }
        match granted {
            Err(interrupted) => Err(interrupted),
            Ok(Err(_elapsed)) => Err(StorageError::LockWaitTimeout),
            // The grant went to us but we no longer hold it: cannot happen while we are the
            // only one releasing our own locks; treat as a timeout rather than proceed unlocked.
            Ok(_) => Err(StorageError::LockWaitTimeout),
        }
    }

    /// Releases every lock in `keys` held by `txn`, handing each to its next live waiter.
    pub(crate) fn release(&self, txn: TxnId, keys: impl IntoIterator<Item = LockKey>) {
        let mut inner = self.inner.lock();
        if !inner.waiting_on.is_empty() {
            inner.waiting_on.remove(&txn);
        }
        for key in keys {
            let Some(entry) = inner.locks.get_mut(&key) else {
                continue;
            };
            if entry.holder != txn {
                continue;
            }
            let mut next = None;
            while let Some((waiter, tx)) = entry.waiters.pop_front() {
                if tx.send(()).is_ok() {
                    next = Some(waiter);
                    break;
                }
            }
            match next {
                Some(waiter) => entry.holder = waiter,
                None => {
                    inner.locks.remove(&key);
                }
            }
        }
    }

    /// Number of keys currently locked (for statistics and tests).
    pub(crate) fn locked_count(&self) -> usize {
        self.inner.lock().locks.len()
    }
}

impl Inner {
    /// True if following wait-for edges from `start` reaches `target`.
    fn reaches(&self, start: TxnId, target: TxnId) -> bool {
        let mut current = start;
        // Each step visits a distinct waiting transaction, so the walk is bounded by their count.
        for _ in 0..=self.waiting_on.len() {
            if current == target {
                return true;
            }
            let Some(key) = self.waiting_on.get(&current) else {
                return false;
            };
            let Some(entry) = self.locks.get(key) else {
                return false;
            };
            current = entry.holder;
        }
        current == target
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn key(lm: &LockManager, s: &str) -> LockKey {
        lm.key(0, Slice::from(s))
    }

    #[tokio::test]
    async fn reacquire_is_noop_and_release_frees() {
        let lm = LockManager::new(Duration::from_millis(50));
        assert!(lm.acquire(1, &key(&lm, "a")).await.unwrap());
        assert!(!lm.acquire(1, &key(&lm, "a")).await.unwrap());
        lm.release(1, [key(&lm, "a")]);
        assert_eq!(lm.locked_count(), 0);
    }

    #[tokio::test]
    async fn waiter_times_out() {
        let lm = LockManager::new(Duration::from_millis(50));
        lm.acquire(1, &key(&lm, "a")).await.unwrap();
        assert!(matches!(
            lm.acquire(2, &key(&lm, "a")).await,
            Err(StorageError::LockWaitTimeout)
        ));
        lm.release(1, [key(&lm, "a")]);
        assert_eq!(lm.locked_count(), 0);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn waiter_is_granted_on_release() {
        let lm = Arc::new(LockManager::new(Duration::from_secs(5)));
        lm.acquire(1, &key(&lm, "a")).await.unwrap();
        let lm2 = Arc::clone(&lm);
        let waiter = tokio::spawn(async move { lm2.acquire(2, &key(&lm2, "a")).await });
        tokio::time::sleep(Duration::from_millis(20)).await;
        lm.release(1, [key(&lm, "a")]);
        assert!(waiter.await.unwrap().unwrap());
        lm.release(2, [key(&lm, "a")]);
        assert_eq!(lm.locked_count(), 0);
    }

    #[tokio::test]
    async fn try_acquire_never_waits() {
        let lm = LockManager::new(Duration::from_secs(5));
        assert!(lm.try_acquire(1, &key(&lm, "a")).unwrap());
        assert!(!lm.try_acquire(1, &key(&lm, "a")).unwrap());
        assert!(matches!(
            lm.try_acquire(2, &key(&lm, "a")),
            Err(StorageError::WouldWait)
        ));
        lm.release(1, [key(&lm, "a")]);
        assert!(lm.try_acquire(2, &key(&lm, "a")).unwrap());
        lm.release(2, [key(&lm, "a")]);
        assert_eq!(lm.locked_count(), 0);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn cycle_is_detected() {
        let lm = Arc::new(LockManager::new(Duration::from_secs(5)));
        lm.acquire(1, &key(&lm, "a")).await.unwrap();
        lm.acquire(2, &key(&lm, "b")).await.unwrap();
        let lm2 = Arc::clone(&lm);
        let t1 = tokio::spawn(async move { lm2.acquire(1, &key(&lm2, "b")).await });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(matches!(
            lm.acquire(2, &key(&lm, "a")).await,
            Err(StorageError::Deadlock)
        ));
        lm.release(2, [key(&lm, "b")]);
        assert!(t1.await.unwrap().unwrap());
    }
}
