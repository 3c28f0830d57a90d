//! Transaction admission: how many multi-statement transactions run at once.
//!
//! Why: a transaction's snapshot and row locks live from its start to its end. With many more
//! clients than CPUs (sysbench `--threads=500` on two cores), serving every client's next
//! statement in turn stretches each transaction across hundreds of other clients' statements
//! (~0.8 s instead of ~36 ms with 32 clients): its row locks are held that much longer, and its
//! snapshot is older than the storage point cache's entries, so its reads fall back to scanning
//! memtable versions — every statement costs more CPU just when CPU is short. MySQL answers this
//! with `innodb_thread_concurrency` and the thread pool's transaction prioritisation; this gate
//! gets the latter's effect with one rule: a transaction opened by `BEGIN` / `START
//! TRANSACTION`, or by the first statement while autocommit is off, first takes one of `limit`
//! slots, in arrival order, and keeps it until it commits or rolls back. The waiting happens
//! before the transaction takes its snapshot, so an admitted transaction reads fresh data.
//!
//! Invariants:
//! - Nothing that may hold a row lock waits here: statements of an open transaction and
//!   autocommitted statements never take a slot, and a transaction only waits before it starts.
//!   So the gate cannot deadlock with the lock manager.
//! - A slot held by a transaction whose client went quiet does not stall the others: while a
//!   transaction is between statements its slot records since when; a waiter that has waited
//!   `idle_revoke` without being admitted revokes the slot of one holder idle for at least that
//!   long (its permit goes to the head of the queue, as any release does). The revoked
//!   transaction goes on without a slot, and its permit is forgotten when it ends, so the number
//!   of slot-holding transactions never exceeds `limit`; at most, revoked transactions run beside
//!   them.
//! - Waiters are admitted in arrival order (tokio's semaphore is fair, and a waiter keeps its
//!   place while it revokes).
//! - `limit` 0 turns the gate off: every transaction is admitted at once.

use parking_lot::Mutex;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Default for how long a transaction may sit idle between statements, while others wait for
/// a slot, before its slot is revoked.
pub const DEFAULT_IDLE_REVOKE: Duration = Duration::from_millis(100);

/// Slot state: the holder is running a statement.
const BUSY: u64 = 0;
/// Slot state: the slot was revoked (or its holder ended).
const REVOKED: u64 = u64::MAX;

/// The admission gate shared by all sessions (see the module docs).
pub struct TxnGate {
    limit: usize,
    idle_revoke: Duration,
    permits: Arc<Semaphore>,
    /// The slots of the admitted transactions that still hold one.
    holders: Mutex<Vec<Arc<Slot>>>,
    /// Origin of the idle timestamps.
    epoch: Instant,
    waits: AtomicU64,
    revoked: AtomicU64,
}

/// One admitted transaction's slot state: [`BUSY`], [`REVOKED`], or idle since that many
/// milliseconds after the gate's epoch, plus one.
struct Slot {
    state: AtomicU64,
}

/// What an admitted transaction holds until it ends (dropping it gives the slot back).
pub struct Admission {
    held: Option<Held>,
}

struct Held {
    gate: Arc<TxnGate>,
    slot: Arc<Slot>,
    permit: Option<OwnedSemaphorePermit>,
}

impl TxnGate {
    /// A gate admitting at most `limit` transactions at once (0: no limit), revoking the slots
    /// of transactions idle for `idle_revoke` while others wait.
    #[must_use]
    pub fn new(limit: usize, idle_revoke: Duration) -> Arc<Self> {
        let limit = limit.min(Semaphore::MAX_PERMITS);
        Arc::new(Self {
            limit,
            idle_revoke,
            permits: Arc::new(Semaphore::new(limit)),
            holders: Mutex::new(Vec::with_capacity(limit)),
            epoch: Instant::now(),
            waits: AtomicU64::new(0),
            revoked: AtomicU64::new(0),
        })
    }

    /// Transactions that had to wait for a slot, since start.
    #[must_use]
    pub fn waits(&self) -> u64 {
        self.waits.load(Ordering::Relaxed)
    }

    /// Slots revoked from idle transactions, since start.
    #[must_use]
    pub fn revocations(&self) -> u64 {
        self.revoked.load(Ordering::Relaxed)
    }

    /// Waits for a slot (see the module docs). Call before the transaction takes its snapshot.
    pub async fn admit(self: &Arc<Self>) -> Admission {
        if self.limit == 0 {
            return Admission { held: None };
        }
        let permit = match self.permits.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                self.waits.fetch_add(1, Ordering::Relaxed);
                let mut acquire = pin!(self.permits.clone().acquire_owned());
                loop {
                    match tokio::time::timeout(self.idle_revoke, acquire.as_mut()).await {
                        Ok(Ok(permit)) => break permit,
                        // The semaphore is never closed; were it, admitting is the safe answer.
                        Ok(Err(_closed)) => return Admission { held: None },
                        Err(_elapsed) => self.revoke_one_idle(),
                    }
                }
            }
        };
        let slot = Arc::new(Slot {
            state: AtomicU64::new(BUSY),
        });
        self.holders.lock().push(slot.clone());
        Admission {
            held: Some(Held {
                gate: self.clone(),
                slot,
                permit: Some(permit),
            }),
        }
    }

    fn now_stamp(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis())
            .unwrap_or(REVOKED - 2)
            .saturating_add(1)
    }

    /// Revokes the slot of one holder idle for at least `idle_revoke`, if there is one: its
    /// permit is replaced by a new one, which the semaphore hands to the longest waiter.
    fn revoke_one_idle(&self) {
        let now = self.now_stamp();
        let min_idle = u64::try_from(self.idle_revoke.as_millis()).unwrap_or(u64::MAX);
        let mut holders = self.holders.lock();
        let victim = holders.iter().position(|slot| {
            let since = slot.state.load(Ordering::Acquire);
            since != BUSY
                && since != REVOKED
                && now.saturating_sub(since) >= min_idle
                && slot
                    .state
                    .compare_exchange(since, REVOKED, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
        });
        if let Some(i) = victim {
            holders.swap_remove(i);
            drop(holders);
            self.revoked.fetch_add(1, Ordering::Relaxed);
            self.permits.add_permits(1);
        }
    }
}

impl Admission {
    /// The transaction is running a statement: its slot cannot be revoked meanwhile.
    pub fn busy(&self) {
        if let Some(h) = &self.held {
            let cur = h.slot.state.load(Ordering::Acquire);
            if cur != REVOKED && cur != BUSY {
                // Fails only if a revoker got there first, which leaves it REVOKED.
                let _ =
                    h.slot
                        .state
                        .compare_exchange(cur, BUSY, Ordering::AcqRel, Ordering::Acquire);
            }
        }
    }

    /// The transaction is between statements, waiting for its client.
    pub fn idle(&self) {
        if let Some(h) = &self.held {
            let now = h.gate.now_stamp();
            // Fails only when already REVOKED (nothing else leaves BUSY).
            let _ = h
                .slot
                .state
                .compare_exchange(BUSY, now, Ordering::AcqRel, Ordering::Acquire);
        }
    }

    /// True while this transaction holds a slot (not revoked, gate on).
    #[cfg(test)]
    fn holds_slot(&self) -> bool {
        self.held
            .as_ref()
            .is_some_and(|h| h.slot.state.load(Ordering::Acquire) != REVOKED)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let prev = self.slot.state.swap(REVOKED, Ordering::AcqRel);
        if prev == REVOKED {
            // Revoked: the gate already added a permit in place of this one.
            if let Some(p) = self.permit.take() {
                p.forget();
            }
        } else {
            let mut holders = self.gate.holders.lock();
            if let Some(i) = holders.iter().position(|s| Arc::ptr_eq(s, &self.slot)) {
                holders.swap_remove(i);
            }
        }
        // Any permit still held returns to the semaphore here.
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHORT: Duration = Duration::from_millis(30);

    #[tokio::test]
    async fn admits_up_to_the_limit_then_in_arrival_order() {
        let gate = TxnGate::new(2, Duration::from_secs(60));
        let a = gate.admit().await;
        let b = gate.admit().await;
        assert!(a.holds_slot() && b.holds_slot());
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut tasks = Vec::new();
        for n in 0..3 {
            let (gate, order) = (gate.clone(), order.clone());
            tasks.push(tokio::spawn(async move {
                let adm = gate.admit().await;
                order.lock().push(n);
                adm
            }));
            // Let each waiter queue before the next one arrives.
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(order.lock().is_empty(), "nobody passes a full gate");
        drop(a);
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(*order.lock(), vec![0]);
        drop(b);
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(*order.lock(), vec![0, 1]);
        let first = tasks.remove(0).await.unwrap();
        drop(first);
        let second = tasks.remove(0).await.unwrap();
        let third = tasks.remove(0).await.unwrap();
        assert_eq!(*order.lock(), vec![0, 1, 2]);
        assert!(second.holds_slot() && third.holds_slot());
        assert_eq!(gate.waits(), 3);
        assert_eq!(gate.revocations(), 0);
    }

    #[tokio::test]
    async fn an_idle_holder_loses_its_slot_to_a_waiter() {
        let gate = TxnGate::new(1, SHORT);
        let idle = gate.admit().await;
        idle.idle();
        let waiter = tokio::time::timeout(Duration::from_secs(5), gate.admit())
            .await
            .expect("the idle holder's slot is revoked");
        assert!(waiter.holds_slot());
        assert!(!idle.holds_slot());
        assert_eq!(gate.revocations(), 1);
        // The revoked holder ends: its permit is forgotten, so the limit still holds.
        drop(idle);
        let third = tokio::spawn({
            let gate = gate.clone();
            async move { gate.admit().await }
        });
        waiter.busy();
        tokio::time::sleep(SHORT * 4).await;
        assert!(!third.is_finished(), "a busy holder keeps its slot");
        drop(waiter);
        let third = tokio::time::timeout(Duration::from_secs(5), third)
            .await
            .unwrap()
            .unwrap();
        assert!(third.holds_slot());
    }

    #[tokio::test]
    async fn a_busy_holder_is_not_revoked() {
        let gate = TxnGate::new(1, SHORT);
        let busy = gate.admit().await;
        let waiter = tokio::time::timeout(SHORT * 5, gate.admit()).await;
        assert!(
            waiter.is_err(),
            "waits while the only holder runs a statement"
        );
        assert!(busy.holds_slot());
        assert_eq!(gate.revocations(), 0);
    }

    #[tokio::test]
    async fn limit_zero_admits_everyone() {
        let gate = TxnGate::new(0, SHORT);
        let all: Vec<Admission> = admit_n(&gate, 100).await;
        assert_eq!(all.len(), 100);
        assert!(all.iter().all(|a| !a.holds_slot()));
        assert_eq!(gate.waits(), 0);
    }

    async fn admit_n(gate: &Arc<TxnGate>, n: usize) -> Vec<Admission> {
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            out.push(gate.admit().await);
        }
        out
    }
}
