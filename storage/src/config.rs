//! Storage configuration: one serde struct with defaults, validated in [`StorageConfig::validate`].

use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// When acknowledged commits reach stable storage (names as Redis `appendfsync`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum SyncPolicy {
    /// A commit returns only after an fdatasync that covers it (group commit). Default.
    #[default]
    Always,
    /// A background thread syncs once a second; up to ~1 s of commits can be lost on power loss.
    Everysec,
    /// Never sync explicitly; survives a process crash, not an OS crash.
    None,
}

/// Storage engine settings.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StorageConfig {
    /// Directory holding the engine files (the server passes its data directory).
    pub path: PathBuf,
    /// Durability policy.
    pub sync: SyncPolicy,
    /// Block cache size in bytes.
    pub cache_size_bytes: u64,
    /// Memtable size per keyspace in bytes (flush trigger). The memtable keeps the versions of
    /// a key that an open snapshot may still read (a write unlinks the older ones: the
    /// vendored LSM's pruning memtable, `vendor/README.md`), and a range scan steps over each
    /// of them: under skewed updates while snapshots stay open (sysbench's default `special`
    /// distribution) the hot rows pile up versions, so a smaller memtable makes range reads
    /// cheaper at the cost of more frequent flushes. Against 32 MiB, 8 MiB raised
    /// `oltp_read_write` QPS by a third without a clear cost to `oltp_write_only` (measured
    /// before writes unlinked dead versions).
    pub memtable_bytes: u64,
    /// Capacity of each point cache (latest values of recently used keys of the keyspaces
    /// opened with one, e.g. the Redis key metadata), in bytes.
    pub point_cache_bytes: u64,
    /// Values at least this long, in keyspaces opened for large values
    /// ([`crate::KeyspaceOptions::large_values`], e.g. the Redis key metadata, which holds
    /// string values inline), are separated from their keys when the memtable is flushed: the
    /// value goes to a blob file once, and the LSM tables — rewritten at every compaction —
    /// carry only a small pointer to it. Blob files whose values were mostly overwritten are
    /// rewritten during compaction. `0` turns separation off for keyspaces created from then
    /// on; an existing keyspace keeps the setting it was created with.
    pub large_value_bytes: u32,
    /// Memtable size in bytes of the keyspaces opened for large values (flush trigger). Every
    /// flush writes a blob file and a table and fsyncs them and the journal; that I/O delays
    /// the commit pipeline's journal syncs, and the blob files it leaves are what compaction
    /// later collects, so keyspaces that take large values flush less often with a larger
    /// memtable, which also absorbs more overwrites of a key before the flush writes its value.
    /// On the RESP benchmark (16 KiB SETs, 32 clients, pipelined) 64 MiB beat 8 MiB and 128 MiB
    /// beat 64 MiB by about a tenth in throughput; the memtable (and up to three sealed ones
    /// waiting for their flush) is memory the keyspace may hold.
    pub large_value_memtable_bytes: u64,
    /// Entry count at which the memtable of a keyspace opened for large values is flushed,
    /// whichever of this and `large_value_memtable_bytes` comes first; `0` = no entry limit.
    /// Both limits count the versions linked in the memtable: a write unlinks the older
    /// versions of its key that no snapshot can see, never the one it replaces (that one goes
    /// at the key's next write), and a memtable that reaches a limit with many replaced
    /// versions is pruned instead of flushed (vendor/README.md, fjall's sixth change), so
    /// overwrites of a hot set of keys stay at one or two versions per key. Many distinct small
    /// values fill a byte limit sized for large ones with hundreds of thousands of entries, and
    /// each write searches the memtable's skiplist (cache misses down a tall skiplist), while
    /// large values reach the byte limit first and keep their infrequent flushes.
    pub large_value_memtable_entries: u64,
    /// How long a transaction waits for a row/key lock before `LockWaitTimeout`, in ms.
    pub lock_wait_timeout_ms: u64,
}

impl Default for StorageConfig {
    fn default() -> Self {
        Self {
            path: PathBuf::from("orcinus-data"),
            sync: SyncPolicy::Always,
            cache_size_bytes: 256 * 1024 * 1024,
            memtable_bytes: 8 * 1024 * 1024,
            point_cache_bytes: 256 * 1024 * 1024,
            large_value_bytes: 4096,
            large_value_memtable_bytes: 128 * 1024 * 1024,
            large_value_memtable_entries: 65_536,
            lock_wait_timeout_ms: 50_000,
        }
    }
}

impl StorageConfig {
    /// A configuration for tests: tiny caches and buffers so flush and compaction paths run.
    #[must_use]
    pub fn for_test(path: PathBuf) -> Self {
        Self {
            path,
            sync: SyncPolicy::Always,
            cache_size_bytes: 1024 * 1024,
            memtable_bytes: 256 * 1024,
            point_cache_bytes: 64 * 1024,
            large_value_bytes: 512,
            large_value_memtable_bytes: 256 * 1024,
            large_value_memtable_entries: 1024,
            lock_wait_timeout_ms: 2_000,
        }
    }

    /// The lock-wait timeout as a duration.
    #[must_use]
    pub fn lock_wait_timeout(&self) -> Duration {
        Duration::from_millis(self.lock_wait_timeout_ms)
    }

    /// Checks the values; returns a message naming the bad setting.
    pub fn validate(&self) -> Result<(), String> {
        if self.cache_size_bytes < 64 * 1024 {
            return Err("storage.cache_size_bytes must be at least 65536".into());
        }
        if self.memtable_bytes < 64 * 1024 {
            return Err("storage.memtable_bytes must be at least 65536".into());
        }
        if self.point_cache_bytes < 64 * 1024 {
            return Err("storage.point_cache_bytes must be at least 65536".into());
        }
        if self.large_value_memtable_bytes < 64 * 1024 {
            return Err("storage.large_value_memtable_bytes must be at least 65536".into());
        }
        if self.lock_wait_timeout_ms == 0 {
            return Err("storage.lock_wait_timeout_ms must be positive".into());
        }
        Ok(())
    }
}
