//! [`Transaction`]: snapshot reads plus read-your-own-writes, pessimistic per-key write locks,
//! and an atomic durable commit.
//!
//! - Plain reads ([`Transaction::get`], [`Transaction::scan`]) see the snapshot taken at begin
//!   (at the first plain read if begun by `Engine::begin_snapshot_on_read`, or after
//!   [`Transaction::refresh_snapshot`]) overlaid with the
//!   transaction's own writes (REPEATABLE READ consistent reads).
//! - Locking reads ([`Transaction::get_for_update`]) take the key's lock and then read the latest
//!   committed value (like InnoDB's locking reads), so read-modify-write never loses an update.
//! - Writes lock their key first; the write set is applied as one batch at commit.
//! - Locks are released once the batch is in the journal, before the sync: any transaction that
//!   then reads the data commits later in journal order, so its own acknowledgement implies ours
//!   is durable (early lock release).
//! - Dropping an uncommitted transaction rolls it back.
//! - A [`Savepoint`] marks the write set; [`Transaction::rollback_to`] undoes every write made
//!   after it (locks taken since stay held until the transaction ends). Writes are logged for
//!   undo only once a savepoint has been taken.
//! - With [`Transaction::set_lock_wait`]`(false)` a lock held by another transaction fails at
//!   once with [`crate::StorageError::WouldWait`] instead of waiting, so a caller that holds
//!   locks can give them up (commit or roll back) before it waits.

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
use std::sync::OnceLock;
use std::time::Duration;

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

/// The write set of one keyspace. A key's `Slice` is shared (not copied) by the lock table,
/// the undo log, the point-cache update and the LSM batch.
struct KsWrites {
    ks: Keyspace,
    map: BTreeMap<Slice, Option<Slice>>,
}

/// One logged write: the keyspace id, the key, and its write-set entry before the write.
struct Undo {
    ks: u32,
    key: Slice,
    previous: Option<Option<Slice>>,
}

/// A point in a transaction's write set to roll back to ([`Transaction::savepoint`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Savepoint(usize);

/// A transaction. See the module docs for its isolation rules.
pub struct Transaction {
    engine: Engine,
    id: TxnId,
    /// The read snapshot and the applied commit epoch read just before it was taken
    /// (point-cache reads). Empty after [`Transaction::refresh_snapshot`] until the next
    /// plain read takes a new one.
    snapshot: OnceLock<(u64, fjall::Snapshot)>,
    writes: BTreeMap<u32, KsWrites>,
    locked: Vec<LockKey>,
    /// How long [`Transaction::lock`] waits; `None` is the engine's configured timeout.
    lock_wait_timeout: Option<Duration>,
    /// Writes since the first savepoint, oldest first (`None`: no savepoint taken yet).
    undo: Option<Vec<Undo>>,
    /// False: a lock held by another transaction fails with `WouldWait` instead of waiting.
    lock_wait: bool,
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
            snapshot: OnceLock::from((snapshot_epoch, snapshot)),
            writes: BTreeMap::new(),
            locked: Vec::new(),
            lock_wait_timeout: None,
            undo: None,
            lock_wait: true,
        }
    }

    /// A transaction whose read snapshot is taken by its first plain read
    /// ([`crate::Engine::begin_snapshot_on_read`]).
    pub(crate) fn without_snapshot(engine: Engine, id: TxnId) -> Self {
        Self {
            engine,
            id,
            snapshot: OnceLock::new(),
            writes: BTreeMap::new(),
            locked: Vec::new(),
            lock_wait_timeout: None,
            undo: None,
            lock_wait: true,
        }
    }

    /// Whether [`Transaction::lock`] (and every write, which locks) waits for a lock held by
    /// another transaction (`true`, the default) or fails at once with `WouldWait`.
    pub fn set_lock_wait(&mut self, wait: bool) {
        self.lock_wait = wait;
    }

    /// Marks the current write set; from now on writes are logged so that
    /// [`Transaction::rollback_to`] can undo them.
    pub fn savepoint(&mut self) -> Savepoint {
        Savepoint(self.undo.get_or_insert_with(Vec::new).len())
    }

    /// Number of writes made since `savepoint` (0: nothing written since).
    #[must_use]
    pub fn writes_since(&self, savepoint: Savepoint) -> usize {
        self.undo
            .as_ref()
            .map_or(0, |u| u.len().saturating_sub(savepoint.0))
    }

    /// Undoes every write made after `savepoint` (reads see the write set as it was then).
    /// Locks taken since stay held until the transaction ends.
    pub fn rollback_to(&mut self, savepoint: Savepoint) {
        let Some(undo) = self.undo.as_mut() else {
            return;
        };
        while undo.len() > savepoint.0 {
            let Some(entry) = undo.pop() else {
                break;
            };
            let Some(w) = self.writes.get_mut(&entry.ks) else {
                continue;
            };
            match entry.previous {
                Some(previous) => {
                    w.map.insert(entry.key, previous);
                }
                None => {
                    w.map.remove(&entry.key);
                }
            }
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

    /// Replaces the read snapshot with a fresh one (own writes stay visible). The new snapshot
    /// is taken by the next plain read, so it sees at least everything committed before this
    /// call; a transaction that reads nothing more pays nothing for it.
    pub fn refresh_snapshot(&mut self) {
        self.snapshot = OnceLock::new();
    }

    /// The read snapshot (taken now if it was refreshed since the last read) and its epoch.
    fn snapshot(&self) -> &(u64, fjall::Snapshot) {
        self.snapshot.get_or_init(|| {
            // The epoch before the snapshot: every commit up to it is visible to the snapshot.
            let epoch = self.engine.applied_epoch();
            (epoch, self.engine.inner.db.snapshot())
        })
    }

    fn own_write(&self, ks: &Keyspace, key: &[u8]) -> Option<&Option<Slice>> {
        self.writes.get(&ks.id).and_then(|w| w.map.get(key))
    }

    /// Consistent read: own writes, else the snapshot.
    pub fn get(&self, ks: &Keyspace, key: &[u8]) -> Result<Option<Slice>> {
        if let Some(v) = self.own_write(ks, key) {
            return Ok(v.clone());
        }
        let (epoch, snapshot) = self.snapshot();
        let Some(cache) = &ks.cache else {
            return Ok(snapshot.get(&ks.inner, key)?.map(Slice));
        };
        if let Cached::Hit(value) = cache.lookup(key, *epoch) {
            return Ok(value);
        }
        let value = snapshot.get(&ks.inner, key)?.map(Slice);
        cache.offer(key, value.clone(), *epoch);
        Ok(value)
    }

    /// [`Transaction::get`] answered only from the transaction's own writes and the keyspace's
    /// point cache: `None` when neither holds the key's value as this transaction sees it
    /// (then read it with `get`). Lets a caller probe many keys cheaply and fall back to a
    /// scan when the cache does not cover them.
    #[must_use]
    pub fn get_cached(&self, ks: &Keyspace, key: &[u8]) -> Option<Option<Slice>> {
        if let Some(v) = self.own_write(ks, key) {
            return Some(v.clone());
        }
        let cache = ks.cache.as_ref()?;
        let (epoch, _) = self.snapshot();
        match cache.lookup(key, *epoch) {
            Cached::Hit(value) => Some(value),
            Cached::Miss => None,
        }
    }

    /// Latest committed value (own writes first), without locking.
    pub fn get_latest(&self, ks: &Keyspace, key: &[u8]) -> Result<Option<Slice>> {
        if let Some(v) = self.own_write(ks, key) {
            return Ok(v.clone());
        }
        self.engine.get(ks, key)
    }

    /// Sets how long this transaction's lock requests wait before failing with
    /// `LockWaitTimeout` (MySQL's session `innodb_lock_wait_timeout`); the default is the
    /// engine's configured timeout.
    pub fn set_lock_wait_timeout(&mut self, timeout: Duration) {
        self.lock_wait_timeout = Some(timeout);
    }

    /// Takes the exclusive lock on `key`, waiting if needed.
    /// Fails with `Deadlock` (the caller must then roll back) or `LockWaitTimeout` (the
    /// transaction keeps its locks and writes; the caller decides what to undo).
    pub async fn lock(&mut self, ks: &Keyspace, key: &[u8]) -> Result<()> {
        self.lock_shared(ks, &Slice::from(key)).await
    }

    /// [`Transaction::lock`] of a key the caller holds as a `Slice`: a newly taken lock
    /// shares it instead of copying the bytes.
    pub async fn lock_shared(&mut self, ks: &Keyspace, key: &Slice) -> Result<()> {
        crate::check_entry(key, 0)?;
        let locks = &self.engine.inner.locks;
        let lock_key = locks.key(ks.id, key.clone());
        if !self.lock_wait {
            return self.try_lock_key(lock_key);
        }
        let timeout = self
            .lock_wait_timeout
            .unwrap_or_else(|| locks.default_timeout());
        if locks.acquire_within(self.id, &lock_key, timeout).await? {
            self.locked.push(lock_key);
        }
        Ok(())
    }

    /// Takes `lock_key` without waiting (`WouldWait` if another transaction holds it) and
    /// remembers it for release, unless this transaction already held it.
    fn try_lock_key(&mut self, lock_key: crate::lock_manager::LockKey) -> Result<()> {
        if self.engine.inner.locks.try_acquire(self.id, &lock_key)? {
            self.locked.push(lock_key);
        }
        Ok(())
    }

    /// Locking read: takes the lock, then reads the latest committed value (or own write).
    pub async fn get_for_update(&mut self, ks: &Keyspace, key: &[u8]) -> Result<Option<Slice>> {
        self.lock(ks, key).await?;
        self.get_latest(ks, key)
    }

    fn record(&mut self, ks: &Keyspace, key: Slice, value: Option<Slice>) {
        let map = &mut self
            .writes
            .entry(ks.id)
            .or_insert_with(|| KsWrites {
                ks: ks.clone(),
                map: BTreeMap::new(),
            })
            .map;
        match self.undo.as_mut() {
            None => {
                map.insert(key, value);
            }
            Some(undo) => {
                let previous = map.insert(key.clone(), value);
                undo.push(Undo {
                    ks: ks.id,
                    key,
                    previous,
                });
            }
        }
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
            .map(|(k, _)| &**k)
    }

    /// Locks `key` and sets it to `value` in the write set.
    pub async fn put(&mut self, ks: &Keyspace, key: &[u8], value: impl Into<Slice>) -> Result<()> {
        self.put_shared(ks, Slice::from(key), value).await
    }

    /// [`Transaction::put`] of a key the caller holds as a `Slice`: the write set, the lock
    /// table and the commit share it instead of copying the bytes.
    pub async fn put_shared(
        &mut self,
        ks: &Keyspace,
        key: Slice,
        value: impl Into<Slice>,
    ) -> Result<()> {
        let value = value.into();
        crate::check_entry(&key, value.len())?;
        self.lock_shared(ks, &key).await?;
        self.record(ks, key, Some(value));
        Ok(())
    }

    /// [`Transaction::put_shared`] that never waits, whatever [`Transaction::set_lock_wait`]
    /// says: `Ok(false)` (nothing locked or written) if another transaction holds the key's
    /// lock. A caller that may wait then goes on with `put_shared`; the common case, a free
    /// lock, costs no future.
    pub fn try_put_shared(
        &mut self,
        ks: &Keyspace,
        key: Slice,
        value: impl Into<Slice>,
    ) -> Result<bool> {
        let value = value.into();
        crate::check_entry(&key, value.len())?;
        let lock_key = self.engine.inner.locks.key(ks.id, key.clone());
        match self.try_lock_key(lock_key) {
            Ok(()) => {}
            Err(crate::StorageError::WouldWait) => return Ok(false),
            Err(e) => return Err(e),
        }
        self.record(ks, key, Some(value));
        Ok(true)
    }

    /// Whether this transaction waits for locks held by others ([`Transaction::set_lock_wait`]).
    #[must_use]
    pub fn lock_waits(&self) -> bool {
        self.lock_wait
    }

    /// Locks `key` and deletes it in the write set.
    pub async fn delete(&mut self, ks: &Keyspace, key: &[u8]) -> Result<()> {
        self.delete_shared(ks, Slice::from(key)).await
    }

    /// [`Transaction::delete`] of a key the caller holds as a `Slice` (see
    /// [`Transaction::put_shared`]).
    pub async fn delete_shared(&mut self, ks: &Keyspace, key: Slice) -> Result<()> {
        self.lock_shared(ks, &key).await?;
        self.record(ks, key, None);
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
        let (_, snapshot) = self.snapshot();
        let base = wrap_iter(snapshot.range::<&[u8], _>(&ks.inner, (lower, upper)));
        let overlay: Vec<(Slice, Option<Slice>)> = self
            .writes
            .get(&ks.id)
            .map(|w| {
                w.map
                    .range::<[u8], _>((lower, upper))
                    .map(|(k, v)| (k.clone(), v.clone()))
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
        let mut batch = self.engine.lsm_batch();
        let mut cached = Vec::new();
        for w in writes.into_values() {
            for (key, value) in w.map {
                if let Some(cache) = &w.ks.cache {
                    cached.push(CacheWrite::new(cache, key.clone(), value.clone()));
                }
                match value {
                    Some(v) => batch.insert(&w.ks.inner, key.0, v.0),
                    None => batch.remove(&w.ks.inner, key.0),
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
        self.undo = None;
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
