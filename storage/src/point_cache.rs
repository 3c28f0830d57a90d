//! [`PointCache`]: the latest committed value (or absence) of recently read or written keys of
//! one keyspace, so that a point read skips the LSM's memtable and table search. A keyspace
//! gets one when it is opened with [`crate::Engine::keyspace_with_point_cache`]; the engine's
//! other keyspaces read the LSM directly.
//!
//! Coherence rests on a commit **epoch** kept by the engine and advanced only under the commit
//! pipeline's append lock, so commits are numbered in the order they are applied:
//!
//! 1. A commit with epoch `E` first *invalidates* each cached key it writes (removes the entry
//!    and raises its shard's `last_touch` to `E`), then applies its batch to the LSM, then
//!    publishes `E` as the applied epoch, then inserts its written values with epoch `E`.
//! 2. A reader takes the applied epoch `A` *before* its LSM snapshot, so every commit with an
//!    epoch `<= A` is visible to that snapshot.
//! 3. An entry with epoch `e` is the latest value of its key at every epoch from `e` until a
//!    later commit invalidates it (which removes it before applying). So a snapshot reader at
//!    `A` may use an entry iff `e <= A`; a latest-value reader may use any entry.
//! 4. A reader that missed may insert what it read from the LSM (with epoch `A`) only if its
//!    shard's `last_touch <= A` and the key has no entry: then every commit that ever touched
//!    the shard is visible to its snapshot, so the value is still the latest; a commit that
//!    touches the key afterwards removes the entry again (rule 1, under the shard lock).
//!
//! Size: entries are evicted (S3-FIFO, `quick_cache`) to keep the total weight — key and value
//! bytes plus a fixed overhead — under the configured capacity.

use crate::Slice;
use parking_lot::Mutex;
use quick_cache::Weighter;
use std::hash::{BuildHasher, RandomState};

/// Shards (independent locks and eviction queues).
const SHARDS: usize = 64;
/// Bytes charged per entry beyond its key and value (map slot, queue node, allocations).
const ENTRY_OVERHEAD: u64 = 64;

#[derive(Clone)]
struct Entry {
    /// `None`: the key is absent.
    value: Option<Slice>,
    epoch: u64,
}

#[derive(Clone)]
struct EntryWeight;

impl Weighter<Box<[u8]>, Entry> for EntryWeight {
    fn weight(&self, key: &Box<[u8]>, entry: &Entry) -> u64 {
        let value = entry.value.as_ref().map_or(0, |v| v.len());
        (key.len() + value) as u64 + ENTRY_OVERHEAD
    }
}

type Map = quick_cache::unsync::Cache<Box<[u8]>, Entry, EntryWeight, RandomState>;

struct Shard {
    map: Map,
    /// Highest epoch of a commit that invalidated a key of this shard.
    last_touch: u64,
}

/// What a lookup found.
pub(crate) enum Cached {
    /// The key's value (`None`: absent) as of the reader's epoch.
    Hit(Option<Slice>),
    /// Not usable: read the LSM.
    Miss,
}

/// A bounded cache of latest values for one keyspace. See the module docs for its rules.
pub(crate) struct PointCache {
    shards: [Mutex<Shard>; SHARDS],
    hasher: RandomState,
}

impl PointCache {
    /// A cache holding at most about `capacity_bytes` of keys and values.
    pub(crate) fn new(capacity_bytes: u64) -> Self {
        let per_shard = (capacity_bytes / SHARDS as u64).max(ENTRY_OVERHEAD * 4);
        let estimated_items = usize::try_from(per_shard / 256).unwrap_or(1024).max(16);
        let shards = std::array::from_fn(|_| {
            Mutex::new(Shard {
                map: Map::with(
                    estimated_items,
                    per_shard,
                    EntryWeight,
                    RandomState::new(),
                    Default::default(),
                ),
                last_touch: 0,
            })
        });
        Self {
            shards,
            hasher: RandomState::new(),
        }
    }

    #[allow(clippy::indexing_slicing)] // the index is reduced modulo the array's length
    fn shard(&self, key: &[u8]) -> &Mutex<Shard> {
        &self.shards[(self.hasher.hash_one(key) % SHARDS as u64) as usize]
    }

    /// The key's value for a snapshot reader at `epoch` (rule 3); `latest` readers (who want
    /// the latest committed value) may use any entry.
    pub(crate) fn lookup(&self, key: &[u8], epoch: Option<u64>) -> Cached {
        let shard = self.shard(key).lock();
        match shard.map.get(key) {
            Some(entry) if epoch.is_none_or(|e| entry.epoch <= e) => {
                Cached::Hit(entry.value.clone())
            }
            _ => Cached::Miss,
        }
    }

    /// Offers what a reader at `epoch` read from the LSM after a miss (rule 4).
    pub(crate) fn offer(&self, key: &[u8], value: Option<Slice>, epoch: u64) {
        let mut shard = self.shard(key).lock();
        if shard.last_touch <= epoch && shard.map.peek(key).is_none() {
            shard.map.insert(key.into(), Entry { value, epoch });
        }
    }

    /// Rule 1, before a commit with `epoch` that writes `key` is applied.
    pub(crate) fn invalidate(&self, key: &[u8], epoch: u64) {
        let mut shard = self.shard(key).lock();
        shard.last_touch = shard.last_touch.max(epoch);
        shard.map.remove(key);
    }

    /// Rule 1, after that commit is applied and its epoch published.
    pub(crate) fn insert_written(&self, key: &[u8], value: Option<Slice>, epoch: u64) {
        let mut shard = self.shard(key).lock();
        shard.map.insert(key.into(), Entry { value, epoch });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(c: &Cached) -> Option<Option<Vec<u8>>> {
        match c {
            Cached::Hit(v) => Some(v.as_ref().map(|s| s.to_vec())),
            Cached::Miss => None,
        }
    }

    #[test]
    fn snapshot_readers_use_only_entries_at_or_below_their_epoch() {
        let cache = PointCache::new(1 << 20);
        cache.invalidate(b"k", 5);
        cache.insert_written(b"k", Some(Slice::from(&b"v5"[..])), 5);
        assert_eq!(value(&cache.lookup(b"k", Some(4))), None);
        assert_eq!(
            value(&cache.lookup(b"k", Some(5))),
            Some(Some(b"v5".to_vec()))
        );
        assert_eq!(value(&cache.lookup(b"k", None)), Some(Some(b"v5".to_vec())));
        cache.invalidate(b"k", 6);
        assert_eq!(value(&cache.lookup(b"k", None)), None, "in-flight write");
    }

    #[test]
    fn a_read_older_than_a_touch_of_its_shard_is_not_cached() {
        let cache = PointCache::new(1 << 20);
        cache.invalidate(b"k", 7);
        cache.offer(b"k", Some(Slice::from(&b"old"[..])), 6);
        assert_eq!(value(&cache.lookup(b"k", None)), None);
        cache.offer(b"k", None, 7);
        assert_eq!(value(&cache.lookup(b"k", Some(7))), Some(None));
        // An offer never replaces an entry (which may be newer).
        cache.offer(b"k", Some(Slice::from(&b"x"[..])), 9);
        assert_eq!(value(&cache.lookup(b"k", None)), Some(None));
    }

    #[test]
    fn weight_stays_bounded() {
        let cache = PointCache::new(64 * 1024);
        for i in 0..10_000u32 {
            let key = i.to_be_bytes();
            cache.invalidate(&key, u64::from(i) + 1);
            cache.insert_written(&key, Some(Slice::from(vec![0u8; 100])), u64::from(i) + 1);
        }
        let weight: u64 = cache.shards.iter().map(|s| s.lock().map.weight()).sum();
        assert!(weight <= 64 * 1024 + SHARDS as u64 * 300, "weight {weight}");
    }
}
