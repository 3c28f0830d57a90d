//! [`Engine`]: opens the data directory (exclusively), owns the LSM database, the keyspace
//! registry, the commit pipeline and the lock manager.
//!
//! Directory layout: `<path>/orcinus.lock` (our exclusive lock, taken before anything else is
//! touched, so a second process changes nothing) and `<path>/lsm/` (the LSM's own files).

use crate::Slice;
use crate::batch::WriteBatch;
use crate::config::StorageConfig;
use crate::error::{Result, StorageError};
use crate::group_commit::{DurabilityTicket, GroupCommit};
use crate::journal_sync::LsmJournal;
use crate::lock_manager::LockManager;
use crate::point_cache::{Cached, PointCache};
use crate::slice::drop_prefetched;
use crate::snapshot::Snapshot;
use crate::transaction::Transaction;
use parking_lot::RwLock;
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A named keyspace: an ordered map of byte keys to byte values.
#[derive(Clone)]
pub struct Keyspace {
    pub(crate) id: u32,
    pub(crate) name: Arc<str>,
    pub(crate) inner: fjall::Keyspace,
    /// Latest values of recently used keys (`keyspace_with_point_cache`), else `None`.
    pub(crate) cache: Option<Arc<PointCache>>,
}

impl Keyspace {
    /// The keyspace's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl std::fmt::Debug for Keyspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Keyspace({})", self.name)
    }
}

pub(crate) struct EngineInner {
    pub(crate) db: fjall::Database,
    keyspaces: RwLock<HashMap<String, Keyspace>>,
    pub(crate) group: Arc<GroupCommit>,
    journal: Arc<LsmJournal>,
    pub(crate) locks: LockManager,
    next_txn: AtomicU64,
    pub(crate) config: StorageConfig,
    /// Epoch of the last applied commit (point-cache coherence, `point_cache.rs`): advanced
    /// only under the commit pipeline's append lock, after the commit is applied.
    pub(crate) applied_epoch: AtomicU64,
    _dir_lock: File,
}

/// A write to a keyspace with a point cache, replayed into the cache around the commit.
pub(crate) struct CacheWrite {
    cache: Arc<PointCache>,
    key: Slice,
    /// The key's hash in `cache`, computed once, before the append lock is taken.
    hash: u64,
    /// `None`: a delete (also once staged into the cache, which takes the value).
    value: Option<Slice>,
}

impl CacheWrite {
    pub(crate) fn new(cache: &Arc<PointCache>, key: Slice, value: Option<Slice>) -> Self {
        Self {
            hash: cache.hash_of(&key),
            cache: Arc::clone(cache),
            key,
            value,
        }
    }
}

/// How a keyspace is opened ([`Engine::keyspace_with`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct KeyspaceOptions {
    /// Keep the latest values of recently used keys in a point cache (keyspaces read mostly
    /// by key).
    pub point_cache: bool,
    /// With `point_cache`: cache keys that differ only in the low six bits of their last byte
    /// together, as one run of up to 64 keys (`point_cache.rs`), for keyspaces read in short
    /// ranges of consecutive integer keys (probed key by key): each key after the first of a
    /// run then finds the run already in the CPU cache.
    pub point_cache_runs: bool,
    /// The keyspace takes large values: separate values of at least
    /// `StorageConfig::large_value_bytes` into blob files at flush, and flush its memtable at
    /// `StorageConfig::large_value_memtable_bytes` or `large_value_memtable_entries`.
    pub large_values: bool,
}

/// The LSM options a keyspace is created with.
fn create_options(
    config: &StorageConfig,
    options: KeyspaceOptions,
) -> fjall::KeyspaceCreateOptions {
    let create = fjall::KeyspaceCreateOptions::default();
    if !options.large_values || config.large_value_bytes == 0 {
        return create.max_memtable_size(config.memtable_bytes);
    }
    // Blob values are stored uncompressed (RocksDB's BlobDB default too): the LSM compresses
    // every blob it writes, with no fall-back for values that do not shrink, and large values
    // are often already compressed (images, archives); that CPU would come from the core the
    // server runs on.
    let separation = fjall::KvSeparationOptions::default()
        .separation_threshold(config.large_value_bytes)
        .compression(fjall::CompressionType::None);
    create
        .max_memtable_size(config.large_value_memtable_bytes)
        .with_kv_separation(Some(separation))
}

/// The storage engine. Cheap to clone; all clones share one database.
#[derive(Clone)]
pub struct Engine {
    pub(crate) inner: Arc<EngineInner>,
}

/// Counters for INFO / SHOW STATUS and benchmarks.
#[derive(Debug, Clone, Copy)]
pub struct EngineStats {
    /// Commits appended to the journal through the commit pipeline.
    pub commits: u64,
    /// fdatasync calls made by the commit pipeline.
    pub syncs: u64,
    /// Of those, the ones made through the LSM's journal lock (first sync, after a journal
    /// rotation); the others overlap with appends.
    pub locked_syncs: u64,
    /// Keys currently locked by transactions.
    pub locked_keys: usize,
    /// Bytes on disk used by the LSM.
    pub disk_bytes: u64,
}

fn lock_directory(path: &Path) -> Result<File> {
    std::fs::create_dir_all(path)?;
    let lock_path = path.join("orcinus.lock");
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&lock_path)?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => {
            Err(StorageError::DirectoryLocked(path.to_path_buf()))
        }
        Err(std::fs::TryLockError::Error(e)) => Err(StorageError::Io(e)),
    }
}

/// Opens the LSM. Our own lock already excludes other processes, so an LSM `Locked` error means a
/// previous engine in this process is still releasing its handles: retry for a short while.
fn open_lsm(config: &StorageConfig, dir: &Path) -> Result<fjall::Database> {
    let mut attempts = 0;
    loop {
        // Journal values are stored as given: compressing each large value on the commit
        // path (LZ4, a fresh buffer per value, under the journal lock) costs CPU on every
        // write and saves nothing on values that do not compress (the LSM compresses the
        // data blocks of its deeper table levels).
        let opened = fjall::Database::builder(dir)
            .cache_size(config.cache_size_bytes)
            .manual_journal_persist(false)
            .journal_compression(fjall::CompressionType::None)
            .open();
        match opened {
            Err(fjall::Error::Locked) if attempts < 100 => {
                attempts += 1;
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            other => return other.map_err(StorageError::from),
        }
    }
}

impl Drop for EngineInner {
    fn drop(&mut self) {
        // The sync thread holds a database handle; stop it so the LSM can close.
        self.group.stop();
    }
}

impl Engine {
    /// Opens (or creates) the engine at `config.path`, recovering the journal.
    pub fn open(config: StorageConfig) -> Result<Self> {
        let dir_lock = lock_directory(&config.path)?;
        let lsm_dir = std::path::absolute(config.path.join("lsm"))?;
        let db = open_lsm(&config, &lsm_dir)?;
        let journal = Arc::new(LsmJournal::new(db.clone(), lsm_dir));
        let group = GroupCommit::start(config.sync, journal.clone())?;
        Ok(Self {
            inner: Arc::new(EngineInner {
                locks: LockManager::new(config.lock_wait_timeout()),
                db,
                keyspaces: RwLock::new(HashMap::new()),
                group,
                journal,
                next_txn: AtomicU64::new(1),
                config,
                applied_epoch: AtomicU64::new(0),
                _dir_lock: dir_lock,
            }),
        })
    }

    /// Opens the keyspace `name`, creating it if missing. Names are `[a-zA-Z0-9_-]{1,64}`.
    pub fn keyspace(&self, name: &str) -> Result<Keyspace> {
        self.keyspace_with(name, KeyspaceOptions::default())
    }

    /// Like [`Engine::keyspace`], with a point cache of `point_cache_bytes` in front of point
    /// reads (transaction `get` / `get_latest`), for keyspaces read mostly by key. Has no effect
    /// if the keyspace is already open without one.
    pub fn keyspace_with_point_cache(&self, name: &str) -> Result<Keyspace> {
        let options = KeyspaceOptions {
            point_cache: true,
            ..KeyspaceOptions::default()
        };
        self.keyspace_with(name, options)
    }

    /// Opens the keyspace `name` with `options`, creating it if missing. Options already
    /// chosen for an open keyspace stay; `large_values` applies only when the keyspace is
    /// created (the LSM records a keyspace's layout with it).
    pub fn keyspace_with(&self, name: &str, options: KeyspaceOptions) -> Result<Keyspace> {
        if let Some(ks) = self.inner.keyspaces.read().get(name) {
            return Ok(ks.clone());
        }
        let valid = !name.is_empty()
            && name.len() <= 64
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !valid {
            return Err(StorageError::InvalidKeyspaceName(name.to_string()));
        }
        let mut map = self.inner.keyspaces.write();
        if let Some(ks) = map.get(name) {
            return Ok(ks.clone());
        }
        let config = &self.inner.config;
        let inner = self
            .inner
            .db
            .keyspace(name, || create_options(config, options))?;
        // The entry limit is a run-time setting of the LSM (not recorded with the keyspace),
        // so it is set at every open.
        if options.large_values && config.large_value_memtable_entries > 0 {
            inner.set_max_memtable_items(config.large_value_memtable_entries);
        }
        let id =
            u32::try_from(map.len()).map_err(|_| StorageError::InvalidKeyspaceName(name.into()))?;
        let cache = options.point_cache.then(|| {
            let run_bits = if options.point_cache_runs {
                crate::point_cache::MAX_RUN_BITS
            } else {
                0
            };
            Arc::new(PointCache::new(config.point_cache_bytes, run_bits))
        });
        let ks = Keyspace {
            id,
            name: name.into(),
            inner,
            cache,
        };
        map.insert(name.to_string(), ks.clone());
        Ok(ks)
    }

    /// A consistent read-only view across all keyspaces as of now.
    #[must_use]
    pub fn snapshot(&self) -> Snapshot {
        Snapshot::new(self.inner.db.snapshot())
    }

    /// Reads the latest committed value of `key`.
    pub fn get(&self, ks: &Keyspace, key: &[u8]) -> Result<Option<Slice>> {
        let Some(cache) = &ks.cache else {
            return Ok(ks.inner.get(key)?.map(Slice));
        };
        // Taken before the lookup and the read: every commit up to it is visible to both.
        let epoch = self.applied_epoch();
        if let Cached::Hit(value) = cache.lookup(key, epoch) {
            return Ok(value);
        }
        let value = ks.inner.get(key)?.map(Slice);
        cache.offer(key, value.clone(), epoch);
        Ok(value)
    }

    /// The epoch of the last applied commit (see `point_cache.rs`).
    pub(crate) fn applied_epoch(&self) -> u64 {
        self.inner.applied_epoch.load(Ordering::Acquire)
    }

    /// A new atomic write batch (no locks; see [`WriteBatch`]).
    #[must_use]
    pub fn batch(&self) -> WriteBatch {
        WriteBatch::new(self.clone())
    }

    /// Begins a transaction: snapshot reads plus its own writes, locks for writes.
    #[must_use]
    pub fn begin(&self) -> Transaction {
        let id = self.inner.next_txn.fetch_add(1, Ordering::Relaxed);
        // The epoch before the snapshot: every commit up to it is visible to the snapshot.
        let epoch = self.applied_epoch();
        Transaction::new(self.clone(), id, epoch, self.inner.db.snapshot())
    }

    /// Like [`Engine::begin`], but the read snapshot is taken by the first plain read (as
    /// InnoDB takes a consistent-read snapshot), not now: it sees at least everything
    /// committed before this call, and a transaction that only writes, or reads only the
    /// latest values under its locks, never takes one.
    #[must_use]
    pub fn begin_snapshot_on_read(&self) -> Transaction {
        let id = self.inner.next_txn.fetch_add(1, Ordering::Relaxed);
        Transaction::without_snapshot(self.clone(), id)
    }

    /// A new LSM batch. Under [`crate::SyncPolicy::Always`] its commit leaves the journal
    /// bytes in the LSM's user-space journal buffer: the sync thread flushes that buffer once
    /// per sync, before the fdatasync (`journal_sync.rs`), instead of one write(2) per commit.
    /// Under the other policies, which promise no sync, every commit still writes its bytes
    /// to the OS at once, so a process crash loses nothing the OS has.
    pub(crate) fn lsm_batch(&self) -> fjall::OwnedWriteBatch {
        let batch = self.inner.db.batch();
        if self.inner.config.sync == crate::SyncPolicy::Always {
            return batch.durability(None);
        }
        batch
    }

    /// Appends a fjall batch through the commit pipeline; the ticket resolves when durable.
    /// `cached` lists the batch's writes to keyspaces with a point cache, which is kept
    /// coherent around the apply (rule 1 of `point_cache.rs`, under the append lock).
    pub(crate) fn append(
        &self,
        batch: fjall::OwnedWriteBatch,
        mut cached: Vec<CacheWrite>,
    ) -> Result<DurabilityTicket> {
        for w in &cached {
            w.cache.prefetch_hashed(w.hash, &w.key);
        }
        let mut replaced = Vec::new();
        let ticket = self.inner.group.append(|| {
            if cached.is_empty() {
                return batch.commit().map_err(StorageError::from);
            }
            let epoch = self.applied_epoch() + 1;
            replaced.reserve(cached.len());
            for w in &mut cached {
                let value = w.value.take();
                replaced.extend(w.cache.stage_hashed(w.hash, &w.key, value, epoch));
            }
            if let Err(e) = batch.commit() {
                for w in &cached {
                    w.cache.forget_hashed(w.hash, &w.key);
                }
                return Err(StorageError::from(e));
            }
            self.inner.applied_epoch.store(epoch, Ordering::Release);
            Ok(())
        });
        // Outside the append lock, and together: each is likely a cache miss.
        drop_prefetched(replaced);
        ticket
    }

    /// Resolves when the engine becomes poisoned (a failed sync); the server then exits.
    pub async fn poisoned(&self) {
        let mut rx = self.inner.group.poisoned_signal();
        let _ = rx.wait_for(|p| *p).await;
    }

    /// True once a sync has failed.
    #[must_use]
    pub fn is_poisoned(&self) -> bool {
        self.inner.group.is_poisoned()
    }

    /// Stops accepting commits, waits for appended ones, syncs everything. Idempotent.
    pub fn shutdown(&self) -> Result<()> {
        self.inner.group.stop();
        if self.inner.group.is_poisoned() {
            return Err(StorageError::Poisoned);
        }
        self.inner.db.persist(fjall::PersistMode::SyncAll)?;
        Ok(())
    }

    /// Engine counters.
    #[must_use]
    pub fn stats(&self) -> EngineStats {
        EngineStats {
            commits: self.inner.group.append_count(),
            syncs: self.inner.group.sync_count(),
            locked_syncs: self.inner.journal.locked_syncs(),
            locked_keys: self.inner.locks.locked_count(),
            disk_bytes: self.inner.db.disk_space().unwrap_or(0),
        }
    }

    /// The configuration the engine was opened with.
    #[must_use]
    pub fn config(&self) -> &StorageConfig {
        &self.inner.config
    }
}
