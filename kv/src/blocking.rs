//! Wake-ups for blocking commands (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP).
//!
//! A blocked client registers a [`Waiter`] in the FIFO queue of every `(db, key)` it waits on,
//! *before* its first attempt, then alternates "attempt in a transaction" and "wait". Every
//! write transaction, after its commit is durable, calls [`BlockingKeys::signal`] with the
//! keys it locked, which wakes the **front** waiter of each key's queue. When a waiter leaves
//! (served, timed out, cancelled or dropped) it wakes the new front of every queue it was
//! at the front of, so a push of several elements serves several waiters one after the other,
//! in arrival order.
//!
//! Invariants:
//! - No lost wake-ups: a waiter is registered before it first reads, and a `Notify` keeps a
//!   permit for a waiter that is not parked yet.
//! - Spurious wake-ups are harmless: a woken waiter re-attempts and, if the list is still
//!   empty, keeps its place in the queue.
//! - A waiter is removed from every queue exactly once ([`WaiterGuard`]'s `Drop`), so a
//!   client that disconnects or whose future is dropped never leaves a stale entry.

use bytes::Bytes;
use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use tokio::sync::Notify;

/// One blocked client.
#[derive(Debug)]
pub struct Waiter {
    id: u64,
    notify: Notify,
}

/// The FIFO queue of clients blocked on one key.
type WaitQueue = VecDeque<Arc<Waiter>>;

/// Per-key FIFO queues of blocked clients.
#[derive(Default)]
pub struct BlockingKeys {
    queues: Mutex<HashMap<(u8, Bytes), WaitQueue>>,
    // Fast path: writers skip the map when nobody is blocked.
    blocked: AtomicUsize,
    next_id: AtomicU64,
}

impl BlockingKeys {
    /// True if any client is blocked (writers then collect their keys for [`Self::signal`]).
    #[must_use]
    pub fn has_waiters(&self) -> bool {
        self.blocked.load(Ordering::Acquire) > 0
    }

    /// Number of blocked clients.
    #[must_use]
    pub fn blocked_clients(&self) -> usize {
        self.blocked.load(Ordering::Acquire)
    }

    /// Registers a waiter at the back of the queue of every key in `keys`.
    pub fn register(self: &Arc<Self>, db: u8, keys: &[Bytes]) -> WaiterGuard {
        let waiter = Arc::new(Waiter {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            notify: Notify::new(),
        });
        let mut unique: Vec<Bytes> = keys.to_vec();
        unique.sort_unstable();
        unique.dedup();
        {
            let mut queues = self.queues.lock();
            for key in &unique {
                queues
                    .entry((db, key.clone()))
                    .or_default()
                    .push_back(waiter.clone());
            }
            self.blocked.fetch_add(1, Ordering::AcqRel);
        }
        WaiterGuard {
            registry: self.clone(),
            waiter,
            db,
            keys: unique,
        }
    }

    /// Wakes the front waiter of each key's queue (called after a write committed).
    pub fn signal<'k>(&self, keys: impl IntoIterator<Item = (u8, &'k [u8])>) {
        if !self.has_waiters() {
            return;
        }
        let queues = self.queues.lock();
        for (db, key) in keys {
            if let Some(front) = queues
                .get(&(db, Bytes::copy_from_slice(key)))
                .and_then(VecDeque::front)
            {
                front.notify.notify_one();
            }
        }
    }

    fn remove(&self, waiter: &Waiter, db: u8, keys: &[Bytes]) {
        let mut queues = self.queues.lock();
        for key in keys {
            let map_key = (db, key.clone());
            let Some(queue) = queues.get_mut(&map_key) else {
                continue;
            };
            let was_front = queue.front().is_some_and(|w| w.id == waiter.id);
            queue.retain(|w| w.id != waiter.id);
            if queue.is_empty() {
                queues.remove(&map_key);
            } else if was_front && let Some(next) = queue.front() {
                next.notify.notify_one();
            }
        }
        self.blocked.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A registered waiter; dropping it leaves every queue (and passes the turn on).
pub struct WaiterGuard {
    registry: Arc<BlockingKeys>,
    waiter: Arc<Waiter>,
    db: u8,
    keys: Vec<Bytes>,
}

impl WaiterGuard {
    /// Resolves when this waiter is signalled (or was signalled since the last call).
    pub async fn notified(&self) {
        self.waiter.notify.notified().await;
    }
}

impl Drop for WaiterGuard {
    fn drop(&mut self) {
        self.registry.remove(&self.waiter, self.db, &self.keys);
    }
}

/// Fired by the connection when its client goes away, so a blocked command returns at once.
#[derive(Debug, Default)]
pub struct Disconnect {
    fired: AtomicBool,
    notify: Notify,
}

impl Disconnect {
    /// Marks the client as gone and wakes a blocked command of it.
    pub fn fire(&self) {
        self.fired.store(true, Ordering::Release);
        self.notify.notify_waiters();
        self.notify.notify_one();
    }

    /// True once fired.
    #[must_use]
    pub fn is_fired(&self) -> bool {
        self.fired.load(Ordering::Acquire)
    }

    /// Resolves once fired.
    pub async fn fired(&self) {
        while !self.is_fired() {
            self.notify.notified().await;
        }
    }
}
