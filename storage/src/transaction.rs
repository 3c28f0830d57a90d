//! [`Transaction`]: snapshot reads plus read-your-own-writes, pessimistic per-key write locks,
//! and an atomic durable commit.
//!
//! - Plain reads ([`Transaction::get`], [`Transaction::scan`]) see the snapshot taken at begin
//!   overlaid with the transaction's own writes (REPEATABLE READ consistent reads).
//! - Locking reads ([`Transaction::get_for_update`]) take the key's lock and then read the latest
//!   committed value (like InnoDB's locking reads), so read-modify-write never loses an update.
//! - Writes lock their key first; the write set is applied as one batch at commit.
//! - Locks are released once the batch is in the journal, before the sync: any transaction that
//!   then reads the data commits later in journal order, so its own acknowledgement implies ours
//!   is durable (early lock release).
//! - Dropping an uncommitted transaction rolls it back.

use crate::Slice;
use crate::engine::{CacheWrite, Engine, Keyspace};
use crate::error::Result;
use crate::group_commit::DurabilityTicket;
use crate::lock_manager::{LockKey, TxnId};
use crate::point_cache::Cached;
use crate::snapshot::{KvPair, wrap_iter};
use fjall::Readable;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::iter::Peekable;
use std::ops::Bound;

/// Iteration order for [`Transaction::scan`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Ascending key order.
    Forward,
    /// Descending key order.
    Reverse,
}

/// An iterator over key-value pairs.
pub type ScanIter = Box<dyn Iterator<Item = Result<KvPair>> + Send>;

struct KsWrites {
    ks: Keyspace,
    map: BTreeMap<Vec<u8>, Option<Slice>>,
}

/// A transaction. See the module docs for its isolation rules.
pub struct Transaction {
    engine: Engine,
    id: TxnId,
    /// The applied commit epoch read just before `snapshot` was taken (point-cache reads).
    snapshot_epoch: u64,
    snapshot: fjall::Snapshot,
    writes: BTreeMap<u32, KsWrites>,
    locked: Vec<LockKey>,
}

impl Transaction {
    pub(crate) fn new(
        engine: Engine,
        id: TxnId,
        snapshot_epoch: u64,
        snapshot: fjall::Snapshot,
    ) -> Self {
        Self {
            engine,
            id,
            snapshot_epoch,
            snapshot,
            writes: BTreeMap::new(),
            locked: Vec::new(),
        }
    }

    /// The transaction's id (unique for the life of the process).
    #[must_use]
    pub fn id(&self) -> u64 {
        self.id
    }

    /// True if nothing has been written.
    #[must_use]
    pub fn is_read_only(&self) -> bool {
        self.writes.values().all(|w| w.map.is_empty())
    }

    /// Replaces the read snapshot with a fresh one (own writes stay visible).
    pub fn refresh_snapshot(&mut self) {
        self.snapshot_epoch = self.engine.applied_epoch();
        self.snapshot = self.engine.inner.db.snapshot();
    }

    fn own_write(&self, ks: &Keyspace, key: &[u8]) -> Option<&Option<Slice>> {
        self.writes.get(&ks.id).and_then(|w| w.map.get(key))
    }

    /// Consistent read: own writes, else the snapshot.
    pub fn get(&self, ks: &Keyspace, key: &[u8]) -> Result<Option<Slice>> {
        if let Some(v) = self.own_write(ks, key) {
            return Ok(v.clone());
        }
        let Some(cache) = &ks.cache else {
            return Ok(self.snapshot.get(&ks.inner, key)?.map(Slice));
        };
        if let Cached::Hit(value) = cache.lookup(key, Some(self.snapshot_epoch)) {
            return Ok(value);
        }
        let value = self.snapshot.get(&ks.inner, key)?.map(Slice);
        cache.offer(key, value.clone(), self.snapshot_epoch);
        Ok(value)
    }

    /// Latest committed value (own writes first), without locking.
    pub fn get_latest(&self, ks: &Keyspace, key: &[u8]) -> Result<Option<Slice>> {
        if let Some(v) = self.own_write(ks, key) {
            return Ok(v.clone());
        }
        self.engine.get(ks, key)
    }

    /// Takes the exclusive lock on `key`, waiting if needed.
    /// Fails with `Deadlock` or `LockWaitTimeout`; the caller must then roll back.
    pub async fn lock(&mut self, ks: &Keyspace, key: &[u8]) -> Result<()> {
        crate::check_entry(key, 0)?;
        let lock_key: LockKey = (ks.id, key.into());
        if self
            .engine
            .inner
            .locks
            .acquire(self.id, lock_key.clone())
            .await?
        {
            self.locked.push(lock_key);
        }
        Ok(())
    }

    /// Locking read: takes the lock, then reads the latest committed value (or own write).
    pub async fn get_for_update(&mut self, ks: &Keyspace, key: &[u8]) -> Result<Option<Slice>> {
        self.lock(ks, key).await?;
        self.get_latest(ks, key)
    }

    fn record(&mut self, ks: &Keyspace, key: Vec<u8>, value: Option<Slice>) {
        self.writes
            .entry(ks.id)
            .or_insert_with(|| KsWrites {
                ks: ks.clone(),
                map: BTreeMap::new(),
            })
            .map
            .insert(key, value);
    }

    /// The first key at or after `from` that this transaction has written in `ks` (put or
    /// delete, not yet committed), if any. Lets a caller enumerate the key families a commit
    /// touches without copying the write set.
    #[must_use]
    pub fn first_written_key(&self, ks: &Keyspace, from: &[u8]) -> Option<&[u8]> {
        let w = self.writes.get(&ks.id)?;
        w.map
            .range::<[u8], _>((Bound::Included(from), Bound::Unbounded))
            .next()
            .map(|(k, _)| k.as_slice())
    }

    /// Locks `key` and sets it to `value` in the write set.
    pub async fn put(&mut self, ks: &Keyspace, key: &[u8], value: impl Into<Slice>) -> Result<()> {
        let value = value.into();
        crate::check_entry(key, value.len())?;
        self.lock(ks, key).await?;
        self.record(ks, key.to_vec(), Some(value));
        Ok(())
    }

    /// Locks `key` and deletes it in the write set.
    pub async fn delete(&mut self, ks: &Keyspace, key: &[u8]) -> Result<()> {
        crate::check_entry(key, 0)?;
        self.lock(ks, key).await?;
        self.record(ks, key.to_vec(), None);
        Ok(())
    }

    /// Consistent range scan (snapshot overlaid with own writes).
    pub fn scan(
        &self,
        ks: &Keyspace,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        direction: Direction,
    ) -> ScanIter {
        let base = wrap_iter(self.snapshot.range::<&[u8], _>(&ks.inner, (lower, upper)));
        let overlay: Vec<(Slice, Option<Slice>)> = self
            .writes
            .get(&ks.id)
            .map(|w| {
                w.map
                    .range::<[u8], _>((lower, upper))
                    .map(|(k, v)| (Slice::from(k.as_slice()), v.clone()))
                    .collect()
            })
            .unwrap_or_default();
        match direction {
            Direction::Forward => Box::new(Merge {
                base: base.peekable(),
                overlay: overlay.into_iter().peekable(),
                reverse: false,
            }),
            Direction::Reverse => Box::new(Merge {
                base: base.rev().peekable(),
                overlay: overlay.into_iter().rev().peekable(),
                reverse: true,
            }),
        }
    }

    /// Consistent scan of all keys starting with `prefix`.
    pub fn scan_prefix(&self, ks: &Keyspace, prefix: &[u8], direction: Direction) -> ScanIter {
        let upper = crate::snapshot::prefix_upper_bound(prefix);
        let upper_bound = upper.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
        self.scan(ks, Bound::Included(prefix), upper_bound, direction)
    }

    /// Applies the write set atomically; returns once it is durable. Locks are released
    /// whatever the outcome.
    pub async fn commit(self) -> Result<()> {
        self.commit_deferred()?.wait().await
    }

    /// Applies the write set atomically (readers see it at once), releases the locks and returns
    /// the ticket for its durability without waiting for it. Nothing that depends on this commit
    /// may be acknowledged before the ticket resolves.
    pub fn commit_deferred(mut self) -> Result<DurabilityTicket> {
        let writes = std::mem::take(&mut self.writes);
        if writes.values().all(|w| w.map.is_empty()) {
            self.release();
            return Ok(DurabilityTicket::ready());
        }
        let mut batch = self.engine.inner.db.batch();
        let mut cached = Vec::new();
        for w in writes.into_values() {
            for (key, value) in w.map {
                if let Some(cache) = &w.ks.cache {
                    cached.push(CacheWrite {
                        cache: cache.clone(),
                        key: key.clone(),
                        value: value.clone(),
                    });
                }
                match value {
                    Some(v) => batch.insert(&w.ks.inner, key, v.0),
                    None => batch.remove(&w.ks.inner, key),
                }
            }
        }
        let appended = self.engine.append(batch, cached);
        self.release();
        appended
    }

    /// Discards the write set and releases locks.
    pub fn rollback(mut self) {
        self.writes.clear();
        self.release();
    }

    fn release(&mut self) {
        if !self.locked.is_empty() {
            self.engine
                .inner
                .locks
                .release(self.id, self.locked.drain(..));
        }
    }
}

impl Drop for Transaction {
    fn drop(&mut self) {
        self.release();
    }
}

struct Merge<B: Iterator<Item = Result<KvPair>>, O: Iterator<Item = (Slice, Option<Slice>)>> {
    base: Peekable<B>,
    overlay: Peekable<O>,
    reverse: bool,
}

impl<B, O> Iterator for Merge<B, O>
where
    B: Iterator<Item = Result<KvPair>>,
    O: Iterator<Item = (Slice, Option<Slice>)>,
{
    type Item = Result<KvPair>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let order = match (self.base.peek(), self.overlay.peek()) {
                (None, None) => return None,
                (Some(Err(_)), _) => return self.base.next(),
                (Some(Ok(_)), None) => return self.base.next(),
                (None, Some(_)) => Ordering::Greater,
                (Some(Ok((bk, _))), Some((ok, _))) => {
                    let o = bk.as_ref().cmp(ok.as_ref());
                    if self.reverse { o.reverse() } else { o }
                }
            };
            match order {
                Ordering::Less => return self.base.next(),
                Ordering::Equal | Ordering::Greater => {
                    if order == Ordering::Equal {
                        self.base.next();
                    }
                    match self.overlay.next() {
                        Some((k, Some(v))) => return Some(Ok((k, v))),
                        Some((_, None)) => {}
                        None => return None,
                    }
                }
            }
        }
    }
}
