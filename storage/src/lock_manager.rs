//! Pessimistic exclusive per-key locks for writers, with wait-for-graph deadlock detection and
//! a lock-wait timeout.
//!
//! Each lock has one holder and a FIFO queue of waiters. A transaction waits on at most one lock
//! at a time, so the wait-for graph is followed as: waiter → holder of the lock it waits on →
//! the lock that holder waits on → … A new wait that would reach the requester again is refused
//! with [`StorageError::Deadlock`] (the requester is the victim). Grants only ever point waiters at
//! a running transaction, which has no outgoing edge, so checking at wait time finds every cycle.

use crate::Slice;
use crate::error::{Result, StorageError};
use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::time::Duration;
use tokio::sync::oneshot;

/// Identifies a transaction.
pub(crate) type TxnId = u64;

/// A held lock: keyspace id plus key bytes, shared with the lock table and with the
/// transaction's write set (a key is allocated once, by its writer, if at all: short keys are
/// stored inline in the [`Slice`]).
pub(crate) type LockKey = (u32, Slice);

struct LockEntry {
    holder: TxnId,
    waiters: VecDeque<(TxnId, oneshot::Sender<()>)>,
}

#[derive(Default)]
struct Inner {
    /// Locked keys per keyspace id (looked up by borrowed key bytes).
    locks: HashMap<u32, HashMap<Slice, LockEntry>>,
    waiting_on: HashMap<TxnId, LockKey>,
}

impl Inner {
    fn entry(&self, ks: u32, key: &[u8]) -> Option<&LockEntry> {
        self.locks.get(&ks).and_then(|m| m.get(key))
    }

    fn entry_mut(&mut self, ks: u32, key: &[u8]) -> Option<&mut LockEntry> {
        self.locks.get_mut(&ks).and_then(|m| m.get_mut(key))
    }

    /// Records `txn` as the holder of a key nobody holds; returns the shared key.
    fn grant_new(&mut self, txn: TxnId, ks: u32, key: &Slice) -> LockKey {
        let shared = key.clone();
        self.locks.entry(ks).or_default().insert(
            shared.clone(),
            LockEntry {
                holder: txn,
                waiters: VecDeque::new(),
            },
        );
        (ks, shared)
    }

    fn remove(&mut self, ks: u32, key: &[u8]) {
        if let Some(m) = self.locks.get_mut(&ks) {
            m.remove(key);
        }
    }
}

pub(crate) struct LockManager {
    inner: Mutex<Inner>,
    timeout: Duration,
}

impl LockManager {
    pub(crate) fn new(timeout: Duration) -> Self {
        Self {
            inner: Mutex::new(Inner::default()),
            timeout,
        }
    }

    /// Acquires `key` of keyspace `ks` for `txn` if that needs no wait. Returns `Ok(Some)` with
    /// the held key if newly acquired, `Ok(None)` if `txn` already held it, and
    /// [`StorageError::WouldWait`] (acquiring nothing) if another transaction holds it.
    pub(crate) fn try_acquire(&self, txn: TxnId, ks: u32, key: &Slice) -> Result<Option<LockKey>> {
        let mut inner = self.inner.lock();
        match inner.entry(ks, key) {
            None => Ok(Some(inner.grant_new(txn, ks, key))),
            Some(e) if e.holder == txn => Ok(None),
            Some(_) => Err(StorageError::WouldWait),
        }
    }

    /// The engine's lock-wait timeout (transactions without their own use it).
    pub(crate) fn default_timeout(&self) -> Duration {
        self.timeout
    }

    /// Acquires `key` of keyspace `ks` for `txn`, waiting at most the engine's lock-wait
    /// timeout. Returns `Ok(Some)` with the held key if newly acquired, `Ok(None)` if `txn`
    /// already held it.
    #[cfg(test)]
    pub(crate) async fn acquire(
        &self,
        txn: TxnId,
        ks: u32,
        key: &Slice,
    ) -> Result<Option<LockKey>> {
        self.acquire_within(txn, ks, key, self.timeout).await
    }

    /// Acquires `key` of keyspace `ks` for `txn`, waiting at most `timeout` (a session's
    /// `innodb_lock_wait_timeout`). Returns `Ok(Some)` with the held key if newly acquired,
    /// `Ok(None)` if `txn` already held it.
    pub(crate) async fn acquire_within(
        &self,
        txn: TxnId,
        ks: u32,
        key: &Slice,
        timeout: Duration,
    ) -> Result<Option<LockKey>> {
        let (rx, shared) = {
            let mut inner = self.inner.lock();
            let holder = match inner.entry(ks, key) {
                None => return Ok(Some(inner.grant_new(txn, ks, key))),
                Some(e) if e.holder == txn => return Ok(None),
                Some(e) => e.holder,
            };
            if inner.reaches(holder, txn) {
                return Err(StorageError::Deadlock);
            }
            let shared = key.clone();
            let (tx, rx) = oneshot::channel();
            if let Some(entry) = inner.entry_mut(ks, key) {
                entry.waiters.push_back((txn, tx));
            }
            inner.waiting_on.insert(txn, (ks, shared.clone()));
            (rx, shared)
        };
        // A fired interrupt (KILL QUERY) ends the wait like a timeout does: the cleanup below
        // removes this waiter, and the caller's statement fails with `Interrupted`.
        let granted = crate::interrupt::interruptible(tokio::time::timeout(timeout, rx)).await;
        let mut inner = self.inner.lock();
        inner.waiting_on.remove(&txn);
        let holds = inner.entry(ks, key).is_some_and(|e| e.holder == txn);
        if holds {
            return Ok(Some((ks, shared)));
        }
        if let Some(entry) = inner.entry_mut(ks, key) {
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
        inner.waiting_on.remove(&txn);
        for (ks, key) in keys {
            let Some(entry) = inner.entry_mut(ks, &key) else {
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
                None => inner.remove(ks, &key),
            }
        }
    }

    /// Number of keys currently locked (for statistics and tests).
    pub(crate) fn locked_count(&self) -> usize {
        self.inner.lock().locks.values().map(HashMap::len).sum()
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
            let Some((ks, key)) = self.waiting_on.get(&current) else {
                return false;
            };
            let Some(entry) = self.entry(*ks, key) else {
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

    fn k(s: &str) -> Slice {
        Slice::from(s)
    }

    fn held(s: &str) -> LockKey {
        (0, k(s))
    }

    #[tokio::test]
    async fn reacquire_is_noop_and_release_frees() {
        let lm = LockManager::new(Duration::from_millis(50));
        assert!(lm.acquire(1, 0, &k("a")).await.unwrap().is_some());
        assert!(lm.acquire(1, 0, &k("a")).await.unwrap().is_none());
        lm.release(1, [held("a")]);
        assert_eq!(lm.locked_count(), 0);
    }

    #[tokio::test]
    async fn waiter_times_out() {
        let lm = LockManager::new(Duration::from_millis(50));
        lm.acquire(1, 0, &k("a")).await.unwrap();
        assert!(matches!(
            lm.acquire(2, 0, &k("a")).await,
            Err(StorageError::LockWaitTimeout)
        ));
        lm.release(1, [held("a")]);
        assert_eq!(lm.locked_count(), 0);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn waiter_is_granted_on_release() {
        let lm = Arc::new(LockManager::new(Duration::from_secs(5)));
        lm.acquire(1, 0, &k("a")).await.unwrap();
        let lm2 = Arc::clone(&lm);
        let waiter = tokio::spawn(async move { lm2.acquire(2, 0, &k("a")).await });
        tokio::time::sleep(Duration::from_millis(20)).await;
        lm.release(1, [held("a")]);
        assert!(waiter.await.unwrap().unwrap().is_some());
        lm.release(2, [held("a")]);
        assert_eq!(lm.locked_count(), 0);
    }

    #[tokio::test]
    async fn try_acquire_never_waits() {
        let lm = LockManager::new(Duration::from_secs(5));
        assert!(lm.try_acquire(1, 0, &k("a")).unwrap().is_some());
        assert!(lm.try_acquire(1, 0, &k("a")).unwrap().is_none());
        assert!(matches!(
            lm.try_acquire(2, 0, &k("a")),
            Err(StorageError::WouldWait)
        ));
        lm.release(1, [held("a")]);
        assert!(lm.try_acquire(2, 0, &k("a")).unwrap().is_some());
        lm.release(2, [held("a")]);
        assert_eq!(lm.locked_count(), 0);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn cycle_is_detected() {
        let lm = Arc::new(LockManager::new(Duration::from_secs(5)));
        lm.acquire(1, 0, &k("a")).await.unwrap();
        lm.acquire(2, 0, &k("b")).await.unwrap();
        let lm2 = Arc::clone(&lm);
        let t1 = tokio::spawn(async move { lm2.acquire(1, 0, &k("b")).await });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(matches!(
            lm.acquire(2, 0, &k("a")).await,
            Err(StorageError::Deadlock)
        ));
        lm.release(2, [held("b")]);
        assert!(t1.await.unwrap().unwrap().is_some());
    }
}
