//! [`PointCache`]: the latest committed value (or absence) of recently read or written keys of
//! one keyspace, so that a point read skips the LSM's memtable and table search. A keyspace
//! gets one when it is opened with [`crate::Engine::keyspace_with_point_cache`]; the engine's
//! other keyspaces read the LSM directly.
//!
//! Coherence rests on a commit **epoch** kept by the engine and advanced only under the commit
//! pipeline's append lock, so commits are numbered in the order they are applied:
//!
//! 1. A commit with epoch `E` first *stages* each cached key it writes: under the shard lock it
//!    raises the shard's `last_touch` to `E` and stores the written value with epoch `E` (in
//!    the old entry's place if there is one: the entry is updated where it lies). Then it
//!    applies its batch to the LSM, then publishes `E` as the applied epoch. An entry whose
//!    epoch is not yet published serves no reader (rule 3), so staging before the apply hides
//!    the old value exactly as removing it would, and the written value needs no second visit.
//!    A commit that fails to apply drops the entries it staged.
//! 2. A reader takes the applied epoch `A` *before* its LSM snapshot (a latest-value reader:
//!    before its lookup), so every commit with an epoch `<= A` is visible to its read.
//! 3. An entry with epoch `e` is the latest value of its key at every epoch from `e` until a
//!    later commit stages the key (which replaces the entry before applying). So a reader at
//!    `A` may use an entry iff `e <= A`: then the commit that wrote it is applied, and no later
//!    commit that writes the key has applied yet (it would have replaced the entry first).
//! 4. A reader that missed may insert what it read from the LSM (with epoch `A`) only if its
//!    shard's `last_touch <= A` and the key has no entry: then every commit that ever touched
//!    the shard is visible to its snapshot, so the value is still the latest; a commit that
//!    touches the key afterwards replaces the entry again (rule 1, under the shard lock).
//!
//! Size: entries are evicted (S3-FIFO, `quick_cache`) to keep the total weight — key and value
//! bytes plus a fixed overhead — under the configured capacity.
//!
//! Layout: a key is hashed once per operation (foldhash, seeded at random per cache); the hash picks
//! the shard and is carried into the shard's table, and keys of up to [`INLINE_KEY`] bytes are
//! stored inside their entry, so a hit costs one hash and no pointer chase for the key.

use crate::Slice;
use crate::carried_hash::CarriedHash;
use parking_lot::Mutex;
use quick_cache::{Equivalent, Weighter};
use std::hash::{BuildHasher, Hash, Hasher};

/// Shards (independent locks and eviction queues).
const SHARDS: usize = 64;
/// Bytes charged per entry beyond its key and value (map slot, queue node, allocations).
const ENTRY_OVERHEAD: u64 = 64;
/// Longest key stored inside its cache entry (longer keys get an allocation of their own).
const INLINE_KEY: usize = 22;

#[derive(Clone)]
struct Entry {
    /// `None`: the key is absent.
    value: Option<Slice>,
    epoch: u64,
}

/// A key's bytes, inside the entry when short: a lookup compares them without following a
/// pointer (one cache miss fewer per hit).
#[derive(Clone)]
enum KeyBytes {
    Inline(u8, [u8; INLINE_KEY]),
    Heap(Box<[u8]>),
}

/// A cached key with its hash, computed once per operation ([`PointCache::hash`]) and used
/// both to pick the shard and, passed through unchanged ([`CarriedHash`]), inside the shard.
#[derive(Clone)]
struct CacheKey {
    hash: u64,
    bytes: KeyBytes,
}

impl CacheKey {
    fn new(key: KeyRef<'_>) -> Self {
        let bytes = match u8::try_from(key.bytes.len()) {
            Ok(len) if key.bytes.len() <= INLINE_KEY => {
                let mut inline = [0u8; INLINE_KEY];
                if let Some(dst) = inline.get_mut(..key.bytes.len()) {
                    dst.copy_from_slice(key.bytes);
                }
                KeyBytes::Inline(len, inline)
            }
            _ => KeyBytes::Heap(key.bytes.into()),
        };
        Self {
            hash: key.hash,
            bytes,
        }
    }

    fn bytes(&self) -> &[u8] {
        match &self.bytes {
            KeyBytes::Inline(len, inline) => inline.get(..usize::from(*len)).unwrap_or_default(),
            KeyBytes::Heap(bytes) => bytes,
        }
    }
}

impl PartialEq for CacheKey {
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash && self.bytes() == other.bytes()
    }
}

impl Eq for CacheKey {}

impl Hash for CacheKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

/// A key being looked up, with its hash.
#[derive(Clone, Copy)]
struct KeyRef<'a> {
    hash: u64,
    bytes: &'a [u8],
}

impl Hash for KeyRef<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

impl Equivalent<CacheKey> for KeyRef<'_> {
    fn equivalent(&self, key: &CacheKey) -> bool {
        self.hash == key.hash && self.bytes == key.bytes()
    }
}

#[derive(Clone)]
struct EntryWeight;

impl Weighter<CacheKey, Entry> for EntryWeight {
    fn weight(&self, key: &CacheKey, entry: &Entry) -> u64 {
        let value = entry.value.as_ref().map_or(0, |v| v.len());
        (key.bytes().len() + value) as u64 + ENTRY_OVERHEAD
    }
}

type Map = quick_cache::unsync::Cache<CacheKey, Entry, EntryWeight, CarriedHash>;

struct Shard {
    map: Map,
    /// Highest epoch of a commit that staged a key of this shard.
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
    /// Keyed: a client cannot choose keys that collide without knowing the seed.
    hasher: foldhash::fast::RandomState,
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
                    CarriedHash,
                    Default::default(),
                ),
                last_touch: 0,
            })
        });
        Self {
            shards,
            hasher: foldhash::fast::RandomState::default(),
        }
    }

    /// The key with its (keyed, per-process) hash.
    fn hash<'a>(&self, key: &'a [u8]) -> KeyRef<'a> {
        KeyRef {
            hash: self.hash_of(key),
            bytes: key,
        }
    }

    /// The shard of a key. Its hash's low bits pick the slot inside the shard's table and its
    /// top bits tag the slot, so the shard is picked from bits in between.
    #[allow(clippy::indexing_slicing)] // the index is reduced modulo the array's length
    fn shard(&self, key: KeyRef<'_>) -> &Mutex<Shard> {
        &self.shards[((key.hash >> 32) % SHARDS as u64) as usize]
    }

    /// The key's value for a reader at applied epoch `epoch` (rules 2 and 3): a snapshot
    /// reader's, or the applied epoch a latest-value reader loaded before this lookup.
    pub(crate) fn lookup(&self, key: &[u8], epoch: u64) -> Cached {
        let key = self.hash(key);
        let shard = self.shard(key).lock();
        match shard.map.get(&key) {
            Some(entry) if entry.epoch <= epoch => Cached::Hit(entry.value.clone()),
            _ => Cached::Miss,
        }
    }

    /// Offers what a reader at `epoch` read from the LSM after a miss (rule 4).
    pub(crate) fn offer(&self, key: &[u8], value: Option<Slice>, epoch: u64) {
        let key = self.hash(key);
        let mut shard = self.shard(key).lock();
        if shard.last_touch <= epoch && shard.map.peek(&key).is_none() {
            shard.map.insert(CacheKey::new(key), Entry { value, epoch });
        }
    }

    /// The hash of `key` in this cache, for [`PointCache::stage_hashed`] and
    /// [`PointCache::forget_hashed`] (a committer hashes each key once, outside the append
    /// lock).
    pub(crate) fn hash_of(&self, key: &[u8]) -> u64 {
        self.hasher.hash_one(key)
    }

    /// Rule 1, before a commit with `epoch` that writes `value` to `key` is applied.
    #[cfg(test)]
    pub(crate) fn stage(&self, key: &[u8], value: Option<Slice>, epoch: u64) {
        self.stage_hashed(self.hash_of(key), key, value, epoch);
    }

    /// [`PointCache::stage`] with the key's [`PointCache::hash_of`].
    pub(crate) fn stage_hashed(&self, hash: u64, key: &[u8], value: Option<Slice>, epoch: u64) {
        let key = KeyRef { hash, bytes: key };
        let mut shard = self.shard(key).lock();
        shard.last_touch = shard.last_touch.max(epoch);
        let entry = Entry { value, epoch };
        match shard.map.get_mut(&key) {
            Some(mut cached) => *cached = entry,
            None => shard.map.insert(CacheKey::new(key), entry),
        }
    }

    /// Drops the entry of a key whose commit failed to apply after [`PointCache::stage`].
    pub(crate) fn forget_hashed(&self, hash: u64, key: &[u8]) {
        let key = KeyRef { hash, bytes: key };
        self.shard(key).lock().map.remove(&key);
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
    fn readers_use_only_entries_at_or_below_their_epoch() {
        let cache = PointCache::new(1 << 20);
        cache.stage(b"k", Some(Slice::from(&b"v5"[..])), 5);
        assert_eq!(
            value(&cache.lookup(b"k", 4)),
            None,
            "commit 5 not yet applied"
        );
        assert_eq!(value(&cache.lookup(b"k", 5)), Some(Some(b"v5".to_vec())));
        assert_eq!(value(&cache.lookup(b"k", 9)), Some(Some(b"v5".to_vec())));
        // A commit in flight (staged, not yet published) hides the value it replaces.
        cache.stage(b"k", Some(Slice::from(&b"v6"[..])), 6);
        assert_eq!(value(&cache.lookup(b"k", 5)), None, "in-flight write");
        assert_eq!(value(&cache.lookup(b"k", 6)), Some(Some(b"v6".to_vec())));
    }

    #[test]
    fn a_staged_entry_takes_no_offer_and_a_failed_commit_leaves_nothing() {
        let cache = PointCache::new(1 << 20);
        cache.stage(b"k", Some(Slice::from(&b"v1"[..])), 1);
        cache.stage(b"k", Some(Slice::from(&b"v2"[..])), 2);
        assert_eq!(value(&cache.lookup(b"k", 1)), None);
        cache.offer(b"k", Some(Slice::from(&b"stale"[..])), 3);
        assert_eq!(value(&cache.lookup(b"k", 3)), Some(Some(b"v2".to_vec())));
        // A commit that failed to apply leaves nothing behind.
        cache.stage(b"k", Some(Slice::from(&b"v3"[..])), 3);
        cache.forget_hashed(cache.hash_of(b"k"), b"k");
        assert_eq!(value(&cache.lookup(b"k", 3)), None);
        cache.offer(b"k", Some(Slice::from(&b"v2"[..])), 3);
        assert_eq!(value(&cache.lookup(b"k", 3)), Some(Some(b"v2".to_vec())));
    }

    #[test]
    fn a_read_older_than_a_touch_of_its_shard_is_not_cached() {
        let cache = PointCache::new(1 << 20);
        cache.stage(b"k", None, 7);
        cache.forget_hashed(cache.hash_of(b"k"), b"k");
        cache.offer(b"k", Some(Slice::from(&b"old"[..])), 6);
        assert_eq!(value(&cache.lookup(b"k", 9)), None);
        cache.offer(b"k", None, 7);
        assert_eq!(value(&cache.lookup(b"k", 7)), Some(None));
        // An offer never replaces an entry (which may be newer).
        cache.offer(b"k", Some(Slice::from(&b"x"[..])), 9);
        assert_eq!(value(&cache.lookup(b"k", 9)), Some(None));
    }

    #[test]
    fn short_and_long_keys_with_shared_prefixes_stay_distinct() {
        let cache = PointCache::new(1 << 20);
        let keys: Vec<Vec<u8>> = (0..48).map(|n| vec![b'k'; n]).collect();
        for (i, key) in keys.iter().enumerate() {
            cache.stage(key, Some(Slice::from(i.to_string().as_bytes())), 1);
        }
        for (i, key) in keys.iter().enumerate() {
            assert_eq!(
                value(&cache.lookup(key, 1)),
                Some(Some(i.to_string().into_bytes())),
                "key of {i} bytes"
            );
        }
        cache.stage(&keys[30], None, 2);
        assert_eq!(value(&cache.lookup(&keys[30], 1)), None);
        assert!(value(&cache.lookup(&keys[31], 1)).is_some());
        assert!(value(&cache.lookup(&keys[29], 1)).is_some());
    }

    #[test]
    fn weight_stays_bounded() {
        let cache = PointCache::new(64 * 1024);
        for i in 0..10_000u32 {
            let key = i.to_be_bytes();
            cache.stage(&key, Some(Slice::from(vec![0u8; 100])), u64::from(i) + 1);
        }
        let weight: u64 = cache.shards.iter().map(|s| s.lock().map.weight()).sum();
        assert!(weight <= 64 * 1024 + SHARDS as u64 * 300, "weight {weight}");
    }
}
