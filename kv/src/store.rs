//! [`Store`] (the kv keyspaces of one engine) and [`KvTxn`], the transaction every data command
//! runs in. Invariants:
//! - Writers take the meta lock of a key (`meta_for_update`) before touching its meta or members,
//!   so members need no locks of their own; multi-key writers lock in sorted key order.
//! - An expired meta record reads as absent everywhere; a writer that finds one replaces it with
//!   a fresh incarnation, so stale members of the old one are never visible again.
//! - Nothing is visible to others before [`KvTxn::commit`] (or [`KvTxn::commit_deferred`])
//!   applies it, and nothing is acknowledged before it is durable: `commit` returns then, and
//!   `commit_deferred`'s ticket resolves then.

use crate::error::KvResult;
use crate::format::{KeyType, Meta, data_prefix, meta_key, user_key_of_meta, with_meta_key};
use bytes::Bytes;
use orcinus_storage::{
    Direction, DurabilityTicket, Engine, Keyspace, KeyspaceOptions, Savepoint, ScanIter, Slice,
    Transaction,
};
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};

/// Keyspace of per-key metadata.
pub const META_KEYSPACE: &str = "kv_meta";
/// Keyspace of collection members.
pub const DATA_KEYSPACE: &str = "kv_data";
/// Keyspace of the sorted-set score index.
pub const SCORE_KEYSPACE: &str = "kv_score";

/// Deletes per batch in FLUSHDB / FLUSHALL.
pub const FLUSH_BATCH: usize = 10_000;

/// The kv keyspaces on one engine plus the incarnation generator.
pub struct Store {
    engine: Engine,
    meta: Keyspace,
    data: Keyspace,
    score: Keyspace,
    next_incarnation: AtomicU64,
    /// Commits that wrote a meta record the expiry sweep must see (a key TTL or a hash with
    /// field TTLs); bumped after such a commit is applied.
    ttl_commits: AtomicU64,
    /// The value `ttl_commits` had when a full expiry sweep cycle that found no such record
    /// began; while the two are equal no record needs sweeping (`u64::MAX`: unknown).
    ttl_clean_at: AtomicU64,
}

impl Store {
    /// Opens (creating if needed) the kv keyspaces.
    pub fn open(engine: Engine) -> KvResult<Self> {
        // String values live inline in their meta record, so the meta keyspace takes large
        // values (blob files at flush instead of rewriting them at every compaction).
        let meta_options = KeyspaceOptions {
            point_cache: true,
            // Read by scattered keys: one key per cache entry.
            point_cache_runs: false,
            large_values: true,
        };
        let meta = engine.keyspace_with(META_KEYSPACE, meta_options)?;
        let data = engine.keyspace(DATA_KEYSPACE)?;
        let score = engine.keyspace(SCORE_KEYSPACE)?;
        // Incarnations are `ms << 11 | counter` at start-up, then increment: unique across
        // restarts unless the clock moves back by more than the ids used since.
        let seed = crate::clock::now_ms() << 11;
        Ok(Self {
            engine,
            meta,
            data,
            score,
            next_incarnation: AtomicU64::new(seed),
            ttl_commits: AtomicU64::new(0),
            ttl_clean_at: AtomicU64::new(u64::MAX),
        })
    }

    /// The engine.
    #[must_use]
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The meta keyspace.
    #[must_use]
    pub fn meta_keyspace(&self) -> &Keyspace {
        &self.meta
    }

    /// The data keyspace.
    #[must_use]
    pub fn data_keyspace(&self) -> &Keyspace {
        &self.data
    }

    /// The sorted-set score index keyspace.
    #[must_use]
    pub fn score_keyspace(&self) -> &Keyspace {
        &self.score
    }

    /// The count of applied commits that wrote a TTL-bearing meta record (see
    /// [`Store::expiry_sweep_needed`]).
    #[must_use]
    pub fn ttl_commits(&self) -> u64 {
        self.ttl_commits.load(Ordering::Acquire)
    }

    /// Records that a full expiry sweep cycle which began when [`Store::ttl_commits`] was
    /// `at_start` found no TTL-bearing record.
    pub fn mark_ttl_clean(&self, at_start: u64) {
        self.ttl_clean_at.store(at_start, Ordering::Release);
    }

    /// False when no meta record can carry a TTL: a full sweep cycle found none and no commit
    /// has written one since that cycle began (a commit bumps the count only after it is
    /// applied, so a record written during the cycle either was seen by it or bumped the count
    /// after the cycle began).
    #[must_use]
    pub fn expiry_sweep_needed(&self) -> bool {
        self.ttl_clean_at.load(Ordering::Acquire) != self.ttl_commits()
    }

    /// A fresh incarnation id.
    pub fn new_incarnation(&self) -> u64 {
        self.next_incarnation.fetch_add(1, Ordering::Relaxed)
    }

    /// Counts the live keys of `db` and how many of them have an expiry (a full scan of the
    /// db's meta records: O(keys)).
    pub fn count_keys(&self, db: u8, now_ms: u64) -> KvResult<(u64, u64)> {
        let (mut keys, mut expires) = (0u64, 0u64);
        for item in self.engine.snapshot().prefix(&self.meta, &[db]) {
            let (_, raw) = item?;
            let meta = Meta::decode(&raw)?;
            if !meta.is_expired(now_ms) {
                keys += 1;
                expires += u64::from(meta.expire_at_ms != 0);
            }
        }
        Ok((keys, expires))
    }

    /// Deletes every record of `db` (meta and members) in batches of [`FLUSH_BATCH`]. Writes
    /// that commit concurrently may survive, as if they ran after the flush.
    pub async fn flush_db(&self, db: u8) -> KvResult<()> {
        for ks in [&self.meta, &self.data, &self.score] {
            loop {
                let mut batch = self.engine.batch();
                for item in self.engine.snapshot().prefix(ks, &[db]).take(FLUSH_BATCH) {
                    let (k, _) = item?;
                    batch.delete(ks, k.to_vec())?;
                }
                if batch.is_empty() {
                    break;
                }
                batch.commit().await?;
            }
        }
        Ok(())
    }

    /// A key's live meta header with its whole stored record (as
    /// [`KvTxn::meta_with_record`]), read as the latest committed state without a
    /// transaction: for a command that makes exactly one read (a lone GET), which is
    /// consistent by itself and needs no snapshot. `now_ms` (the clock, read only if the key has
    /// an expiry) decides expiry.
    pub fn latest_meta_with_record(
        &self,
        db: u8,
        key: &[u8],
        now_ms: impl FnOnce() -> u64,
    ) -> KvResult<Option<(Meta, Slice)>> {
        let raw = with_meta_key(db, key, |mkey| self.engine.get(&self.meta, mkey))?;
        let Some(raw) = raw else {
            return Ok(None);
        };
        let meta = Meta::decode_header(&raw)?;
        // The clock is read only for a key that has an expiry.
        let expired = meta.expire_at_ms != 0 && meta.is_expired(now_ms());
        Ok((!expired).then_some((meta, raw)))
    }

    /// Begins a transaction at time `now_ms` (used for every expiry decision inside it). Its
    /// read snapshot is taken by its first plain read (a command that only writes, like SET,
    /// takes none), so it sees everything committed before that read.
    #[must_use]
    pub fn begin(&self, now_ms: u64) -> KvTxn<'_> {
        KvTxn {
            store: self,
            txn: self.engine.begin_snapshot_on_read(),
            now_ms,
            locked: Vec::new(),
            wrote_ttl: false,
        }
    }
}

/// A point in a [`KvTxn`] to roll back to, taken before a command of a write group runs
/// ([`KvTxn::savepoint`]).
#[derive(Debug, Clone, Copy)]
pub struct CommandSavepoint {
    storage: Savepoint,
    locked: usize,
    wrote_ttl: bool,
}

/// A page of (user key, type) pairs and the user key to resume from, if any.
pub type KeyPage = (Vec<(Bytes, KeyType)>, Option<Bytes>);

/// A transaction over the kv keyspaces.
pub struct KvTxn<'a> {
    store: &'a Store,
    txn: Transaction,
    now_ms: u64,
    // Meta keys this transaction locked (for WATCH epochs); shared with the storage
    // transaction's lock and write set.
    locked: Vec<Slice>,
    // Whether a meta record the expiry sweep must see was written (`Store::ttl_commits`).
    wrote_ttl: bool,
}

/// The `kv_meta` key of (`db`, `key`) as a `Slice` (inline, no allocation, when short), to be
/// shared by the lock, the write set and `KvTxn::locked`.
fn meta_slice(db: u8, key: &[u8]) -> Slice {
    Slice::concat(&[&[db], key])
}

fn live(raw: Option<Slice>, now_ms: u64) -> KvResult<Option<Meta>> {
    match raw {
        None => Ok(None),
        Some(raw) => {
            let meta = Meta::decode(&raw)?;
            Ok((!meta.is_expired(now_ms)).then_some(meta))
        }
    }
}

impl<'a> KvTxn<'a> {
    /// The store.
    #[must_use]
    pub fn store(&self) -> &'a Store {
        self.store
    }

    /// The time all expiry decisions of this transaction use.
    #[must_use]
    pub fn now_ms(&self) -> u64 {
        self.now_ms
    }

    /// Consistent read of a key's live meta.
    pub fn meta(&self, db: u8, key: &[u8]) -> KvResult<Option<Meta>> {
        live(
            self.txn.get(&self.store.meta, &meta_key(db, key))?,
            self.now_ms,
        )
    }

    /// Consistent read of a key's live meta header with the whole stored record, whose bytes
    /// from [`Meta::INLINE_OFFSET`] are its inline part (a string's value): no copy of the
    /// value is made. The returned meta's `inline` is empty.
    pub fn meta_with_record(&self, db: u8, key: &[u8]) -> KvResult<Option<(Meta, Slice)>> {
        let Some(raw) = self.txn.get(&self.store.meta, &meta_key(db, key))? else {
            return Ok(None);
        };
        let meta = Meta::decode_header(&raw)?;
        Ok((!meta.is_expired(self.now_ms)).then_some((meta, raw)))
    }

    /// Locks the key and reads its latest live meta.
    pub async fn meta_for_update(&mut self, db: u8, key: &[u8]) -> KvResult<Option<Meta>> {
        let raw = self.lock_meta_and_read(db, key).await?;
        live(raw, self.now_ms)
    }

    /// Locks the key's meta record (recording it as locked) and reads its latest version.
    async fn lock_meta_and_read(&mut self, db: u8, key: &[u8]) -> KvResult<Option<Slice>> {
        let mkey = meta_slice(db, key);
        self.txn.lock_shared(&self.store.meta, &mkey).await?;
        let raw = self.txn.get_latest(&self.store.meta, &mkey)?;
        self.locked.push(mkey);
        Ok(raw)
    }

    /// Like [`Self::meta_for_update`] but decodes the header only (`inline` is left empty):
    /// for writers that replace the value without reading it (no copy of the old value).
    pub async fn meta_header_for_update(&mut self, db: u8, key: &[u8]) -> KvResult<Option<Meta>> {
        let Some(raw) = self.lock_meta_and_read(db, key).await? else {
            return Ok(None);
        };
        let meta = Meta::decode_header(&raw)?;
        Ok((!meta.is_expired(self.now_ms)).then_some(meta))
    }

    /// True if a meta record (live or expired) exists for the key (latest committed state).
    pub fn raw_meta_exists(&self, db: u8, key: &[u8]) -> KvResult<bool> {
        Ok(self
            .txn
            .get_latest(&self.store.meta, &meta_key(db, key))?
            .is_some())
    }

    /// Locks all `keys` in sorted order (deadlock-free between multi-key commands).
    pub async fn lock_keys(&mut self, db: u8, keys: &[&[u8]]) -> KvResult<()> {
        let mut sorted: Vec<&[u8]> = keys.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        for key in sorted {
            let mkey = meta_slice(db, key);
            self.txn.lock_shared(&self.store.meta, &mkey).await?;
            self.locked.push(mkey);
        }
        Ok(())
    }

    /// Locks all `keys` in sorted order like [`Self::lock_keys`], for a consistent read of
    /// keys the command does not write: they are not recorded as written, so WATCH on them is
    /// not disturbed (written keys are recorded by `meta_for_update` / `put_meta`).
    pub async fn lock_keys_for_read(&mut self, db: u8, keys: &[&[u8]]) -> KvResult<()> {
        let mut sorted: Vec<&[u8]> = keys.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        for key in sorted {
            self.txn.lock(&self.store.meta, &meta_key(db, key)).await?;
        }
        Ok(())
    }

    /// Writes a key's meta (caller holds the key's lock).
    pub async fn put_meta(&mut self, db: u8, key: &[u8], meta: &Meta) -> KvResult<()> {
        self.put_stored_meta(db, key, meta.to_stored()).await
    }

    /// Writes a key's meta already encoded ([`Meta::to_stored`], [`Meta::stored_string`]).
    pub async fn put_stored_meta(&mut self, db: u8, key: &[u8], stored: Slice) -> KvResult<()> {
        let mkey = meta_slice(db, key);
        self.wrote_ttl |= Meta::stored_needs_expiry_sweep(&stored);
        self.txn
            .put_shared(&self.store.meta, mkey.clone(), stored)
            .await?;
        self.locked.push(mkey);
        Ok(())
    }

    /// [`KvTxn::put_stored_meta`] without a future: `Ok(false)` (nothing written) if the key's
    /// lock is held by another transaction and this one may wait for it — then call
    /// `put_stored_meta`. A transaction that may not wait gets the `WouldWait` error here.
    pub fn try_put_stored_meta(&mut self, db: u8, key: &[u8], stored: &Slice) -> KvResult<bool> {
        let mkey = meta_slice(db, key);
        if !self
            .txn
            .try_put_shared(&self.store.meta, mkey.clone(), stored.clone())?
        {
            if self.txn.lock_waits() {
                return Ok(false);
            }
            return Err(orcinus_storage::StorageError::WouldWait.into());
        }
        self.wrote_ttl |= Meta::stored_needs_expiry_sweep(stored);
        self.locked.push(mkey);
        Ok(true)
    }

    /// Deletes a key's meta; members of its incarnation become garbage for the sweeper.
    pub async fn delete_meta(&mut self, db: u8, key: &[u8]) -> KvResult<()> {
        let mkey = meta_slice(db, key);
        self.txn
            .delete_shared(&self.store.meta, mkey.clone())
            .await?;
        self.locked.push(mkey);
        Ok(())
    }

    /// Moves the read snapshot to now (own writes stay visible). Collection writers call this
    /// after locking the key, so member reads see every committed write to that key.
    pub fn refresh(&mut self) {
        self.txn.refresh_snapshot();
    }

    /// Reads one member (caller read the meta in this transaction).
    pub fn member(&self, data_key: &[u8]) -> KvResult<Option<Slice>> {
        Ok(self.txn.get(&self.store.data, data_key)?)
    }

    /// Writes one member (caller holds the owning key's lock).
    pub async fn put_member(&mut self, data_key: &[u8], value: &[u8]) -> KvResult<()> {
        self.txn.put(&self.store.data, data_key, value).await?;
        Ok(())
    }

    /// Deletes one member (caller holds the owning key's lock).
    pub async fn delete_member(&mut self, data_key: &[u8]) -> KvResult<()> {
        self.txn.delete(&self.store.data, data_key).await?;
        Ok(())
    }

    /// Consistent range scan of `kv_data` (raw keys; own writes visible).
    pub fn scan_data(&self, lower: Bound<&[u8]>, upper: Bound<&[u8]>, dir: Direction) -> ScanIter {
        self.txn.scan(&self.store.data, lower, upper, dir)
    }

    /// Consistent range scan of `kv_score` (raw keys; own writes visible).
    pub fn scan_scores(
        &self,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        dir: Direction,
    ) -> ScanIter {
        self.txn.scan(&self.store.score, lower, upper, dir)
    }

    /// Writes one score index entry (caller holds the owning key's lock).
    pub async fn put_score_entry(&mut self, score_key: &[u8]) -> KvResult<()> {
        self.txn
            .put(&self.store.score, score_key, Vec::new())
            .await?;
        Ok(())
    }

    /// Deletes one score index entry (caller holds the owning key's lock).
    pub async fn delete_score_entry(&mut self, score_key: &[u8]) -> KvResult<()> {
        self.txn.delete(&self.store.score, score_key).await?;
        Ok(())
    }

    /// All (member, value) pairs of one incarnation, in member order.
    pub fn members(&self, db: u8, key: &[u8], incarnation: u64) -> KvResult<Vec<(Bytes, Bytes)>> {
        let prefix = data_prefix(db, key, incarnation);
        let mut out = Vec::new();
        for item in self
            .txn
            .scan_prefix(&self.store.data, &prefix, Direction::Forward)
        {
            let (k, v) = item?;
            let member = k.get(prefix.len()..).unwrap_or_default();
            out.push((Bytes::copy_from_slice(member), Bytes::copy_from_slice(&v)));
        }
        Ok(out)
    }

    /// At most `limit` (member, value) pairs of one incarnation with `from <= member < to`
    /// (`to = None`: no upper bound), in `direction` order. A bounded range scan: the cost is
    /// the number of pairs returned, not the collection size.
    #[allow(clippy::too_many_arguments)]
    pub fn member_range(
        &self,
        db: u8,
        key: &[u8],
        incarnation: u64,
        from: &[u8],
        to: Option<&[u8]>,
        direction: Direction,
        limit: usize,
    ) -> KvResult<Vec<(Bytes, Bytes)>> {
        let prefix = data_prefix(db, key, incarnation);
        let mut lower = prefix.clone();
        lower.extend_from_slice(from);
        let upper = match to {
            Some(to) => {
                let mut upper = prefix.clone();
                upper.extend_from_slice(to);
                Some(upper)
            }
            None => orcinus_storage::prefix_upper_bound(&prefix),
        };
        let upper_bound = upper.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
        let iter = self.txn.scan(
            &self.store.data,
            Bound::Included(&lower),
            upper_bound,
            direction,
        );
        let mut out = Vec::new();
        for item in iter.take(limit) {
            let (k, v) = item?;
            let member = k.get(prefix.len()..).unwrap_or_default();
            out.push((Bytes::copy_from_slice(member), Bytes::copy_from_slice(&v)));
        }
        Ok(out)
    }

    /// Live (user key, type) pairs of `db` whose user key starts with `prefix`, from `start`
    /// (a user key, inclusive) on. Stops after `limit` records have been examined and then
    /// returns the user key to resume from.
    pub fn scan_keys(
        &self,
        db: u8,
        prefix: &[u8],
        start: Option<&[u8]>,
        limit: usize,
    ) -> KvResult<KeyPage> {
        let scan_prefix = meta_key(db, prefix);
        let lower = start.map(|s| meta_key(db, s));
        let lower = match lower {
            Some(l) if l > scan_prefix => l,
            _ => scan_prefix.clone(),
        };
        let upper = orcinus_storage::prefix_upper_bound(&scan_prefix);
        let upper_bound = upper.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
        let iter = self.txn.scan(
            &self.store.meta,
            Bound::Included(&lower),
            upper_bound,
            Direction::Forward,
        );
        let mut out = Vec::new();
        for (examined, item) in iter.enumerate() {
            let (k, v) = item?;
            let user_key = Bytes::copy_from_slice(user_key_of_meta(&k));
            if examined >= limit {
                return Ok((out, Some(user_key)));
            }
            let meta = Meta::decode(&v)?;
            if !meta.is_expired(self.now_ms) {
                out.push((user_key, meta.key_type));
            }
        }
        Ok((out, None))
    }

    /// (db, user key) of every key this transaction locked.
    pub fn locked_keys(&self) -> impl Iterator<Item = (u8, &[u8])> {
        self.locked.iter().filter_map(|k| {
            let (db, key) = k.split_first()?;
            Some((*db, key))
        })
    }

    /// Marks the transaction before a command that may have to be undone on its own.
    pub fn savepoint(&mut self) -> CommandSavepoint {
        CommandSavepoint {
            storage: self.txn.savepoint(),
            locked: self.locked.len(),
            wrote_ttl: self.wrote_ttl,
        }
    }

    /// Undoes everything done since `savepoint`: the writes, and the keys recorded as locked
    /// (their locks stay held until the transaction ends, but they no longer count as written
    /// for WATCH and blocked clients).
    pub fn rollback_to(&mut self, savepoint: CommandSavepoint) {
        self.txn.rollback_to(savepoint.storage);
        self.locked.truncate(savepoint.locked);
        self.wrote_ttl = savepoint.wrote_ttl;
    }

    /// Ends a command that succeeded since `savepoint`: if it wrote nothing, the keys it
    /// locked are forgotten as written, as if it had run in a transaction of its own (which,
    /// read-only, would touch no WATCHed key).
    pub fn settle(&mut self, savepoint: CommandSavepoint) {
        if self.txn.writes_since(savepoint.storage) == 0 {
            self.locked.truncate(savepoint.locked);
        }
    }

    /// Whether a lock held by another transaction is waited for (default) or fails at once
    /// with `StorageError::WouldWait`.
    pub fn set_lock_wait(&mut self, wait: bool) {
        self.txn.set_lock_wait(wait);
    }

    /// Commits; returns once durable.
    pub async fn commit(self) -> KvResult<()> {
        self.commit_deferred()?.wait().await?;
        Ok(())
    }

    /// Applies the commit (visible at once) and returns the ticket for its durability.
    pub fn commit_deferred(self) -> KvResult<DurabilityTicket> {
        let (store, wrote_ttl) = (self.store, self.wrote_ttl);
        let ticket = self.txn.commit_deferred()?;
        if wrote_ttl {
            store.ttl_commits.fetch_add(1, Ordering::AcqRel);
        }
        Ok(ticket)
    }

    /// True if nothing was written.
    #[must_use]
    pub fn is_read_only(&self) -> bool {
        self.txn.is_read_only()
    }
}
