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
//! bytes plus a fixed overhead per entry and per key — under the configured capacity.
//!
//! Layout: keys are cached in **runs**. With `run_bits` = `b`, keys that differ only in the low
//! `b` bits of their last byte share one cache entry (a [`Run`]: up to `2^b` slots, sorted),
//! so reading consecutive keys — a short range on an integer key, whose last byte is the
//! value's low byte — finds the entry, and its slots, already in the CPU cache after the first
//! key: one memory miss per key (its value) instead of one per hash-table level. A keyspace
//! read by scattered keys uses `b = 0`: one key per run. Eviction is per run. The coherence
//! rules above hold per key (per slot); `last_touch` is per shard, as before.
//!
//! A run is found by its key — the key without the run bits — hashed once per operation
//! (foldhash, seeded at random per cache); the hash picks the shard and is carried into the
//! shard's table, and run keys of up to [`INLINE_KEY`] bytes are stored inside their entry, so
//! a hit costs one hash and no pointer chase for the key.

use crate::Slice;
use crate::carried_hash::CarriedHash;
use parking_lot::Mutex;
use quick_cache::{Equivalent, Weighter};
use smallvec::SmallVec;
use std::hash::{BuildHasher, Hash, Hasher};

/// Shards (independent locks and eviction queues).
const SHARDS: usize = 64;
/// Bytes charged per run beyond its key and slots (map slot, queue node, allocations).
const RUN_OVERHEAD: u64 = 32;
/// Bytes charged per cached key beyond its value (its slot).
const SLOT_OVERHEAD: u64 = 32;
/// Longest run key stored inside its cache entry (longer keys get an allocation of their own).
const INLINE_KEY: usize = 22;
/// Widest run: 64 keys (a run's keys are bits of its `u64` [`Run::present`]).
pub(crate) const MAX_RUN_BITS: u8 = 6;
/// The `tail` of the run of the empty key (a real tail is a byte).
const EMPTY_KEY_TAIL: u16 = 0x100;

/// One cached key of a run.
#[derive(Clone)]
struct Slot {
    /// `None`: the key is absent.
    value: Option<Slice>,
    epoch: u64,
}

/// The cached keys of one run: `present` has bit `low` set for each cached key (`low`: its run
/// bits, the low bits of its last byte), and `slots` holds their slots in order of `low`, so
/// a key's slot is found by counting bits, without a search through the slots.
#[derive(Clone, Default)]
struct Run {
    present: u64,
    slots: SmallVec<[Slot; 1]>,
}

impl Run {
    fn single(low: u8, slot: Slot) -> Self {
        Self {
            present: 1 << low,
            slots: smallvec::smallvec![slot],
        }
    }

    /// Whether the key with run bits `low` is cached, and its slot's index (where it would be
    /// inserted if not).
    fn index(&self, low: u8) -> (bool, usize) {
        let bit = 1u64 << low;
        let before = (self.present & (bit - 1)).count_ones() as usize;
        (self.present & bit != 0, before)
    }

    fn slot(&self, low: u8) -> Option<&Slot> {
        match self.index(low) {
            (true, i) => self.slots.get(i),
            (false, _) => None,
        }
    }

    /// Sets the key's slot; `only_if_absent`: unless the key has one. Returns the value it
    /// replaced.
    fn put(&mut self, low: u8, slot: Slot, only_if_absent: bool) -> Option<Slice> {
        match self.index(low) {
            (true, _) if only_if_absent => None,
            (true, i) => self
                .slots
                .get_mut(i)
                .and_then(|s| std::mem::replace(s, slot).value),
            (false, i) => {
                self.slots.insert(i, slot);
                self.present |= 1 << low;
                None
            }
        }
    }

    fn remove(&mut self, low: u8) {
        if let (true, i) = self.index(low) {
            self.slots.remove(i);
            self.present &= !(1u64 << low);
        }
    }
}

/// A run key's bytes, inside the entry when short: a lookup compares them without following a
/// pointer (one cache miss fewer per hit).
#[derive(Clone)]
enum KeyBytes {
    Inline(u8, [u8; INLINE_KEY]),
    Heap(Box<[u8]>),
}

/// A run's key (with runs, a cached key without its last byte, plus that byte without the run
/// bits; without runs, the key) with its hash, computed once per operation
/// ([`PointCache::hash_of`]) and used both to pick the shard and, passed through unchanged
/// ([`CarriedHash`]), inside the shard.
#[derive(Clone)]
struct CacheKey {
    hash: u64,
    tail: u16,
    prefix: KeyBytes,
}

impl CacheKey {
    fn new(key: RunRef<'_>) -> Self {
        let prefix = match u8::try_from(key.prefix.len()) {
            Ok(len) if key.prefix.len() <= INLINE_KEY => {
                let mut inline = [0u8; INLINE_KEY];
                if let Some(dst) = inline.get_mut(..key.prefix.len()) {
                    dst.copy_from_slice(key.prefix);
                }
                KeyBytes::Inline(len, inline)
            }
            _ => KeyBytes::Heap(key.prefix.into()),
        };
        Self {
            hash: key.hash,
            tail: key.tail,
            prefix,
        }
    }

    fn prefix(&self) -> &[u8] {
        match &self.prefix {
            KeyBytes::Inline(len, inline) => inline.get(..usize::from(*len)).unwrap_or_default(),
            KeyBytes::Heap(bytes) => bytes,
        }
    }
}

impl PartialEq for CacheKey {
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash && self.tail == other.tail && self.prefix() == other.prefix()
    }
}

impl Eq for CacheKey {}

impl Hash for CacheKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

/// The run of a key being looked up, with its hash.
#[derive(Clone, Copy)]
struct RunRef<'a> {
    hash: u64,
    /// The key without its last byte (with runs; else the whole key).
    prefix: &'a [u8],
    /// The last byte without the run bits ([`EMPTY_KEY_TAIL`] for the empty key; 0 without
    /// runs).
    tail: u16,
}

impl Hash for RunRef<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

impl Equivalent<CacheKey> for RunRef<'_> {
    fn equivalent(&self, key: &CacheKey) -> bool {
        self.hash == key.hash && self.tail == key.tail && self.prefix == key.prefix()
    }
}

#[derive(Clone)]
struct RunWeight;

impl Weighter<CacheKey, Run> for RunWeight {
    fn weight(&self, key: &CacheKey, run: &Run) -> u64 {
        let slots: u64 = run
            .slots
            .iter()
            .map(|s| s.value.as_ref().map_or(0, |v| v.len()) as u64 + SLOT_OVERHEAD)
            .sum();
        key.prefix().len() as u64 + slots + RUN_OVERHEAD
    }
}

type Map = quick_cache::unsync::Cache<CacheKey, Run, RunWeight, CarriedHash>;

struct Shard {
    map: Map,
    /// Highest epoch of a commit that staged a key of this shard.
    last_touch: u64,
}

impl Shard {
    /// Evicts down to the capacity after a run grew in place (which the map does not check,
    /// unlike an insert).
    fn fit(&mut self) {
        let capacity = self.map.capacity();
        if self.map.weight() > capacity {
            self.map.set_capacity(capacity);
        }
    }
}

/// What a lookup found.
pub(crate) enum Cached {
    /// The key's value (`None`: absent) as of the reader's epoch.
    Hit(Option<Slice>),
    /// Not usable: read the LSM.
    Miss,
}

/// A key split into its run and its place in the run.
struct Split<'a> {
    prefix: &'a [u8],
    tail: u16,
    low: u8,
}

/// A bounded cache of latest values for one keyspace. See the module docs for its rules.
pub(crate) struct PointCache {
    shards: [Mutex<Shard>; SHARDS],
    /// Keyed: a client cannot choose keys that collide without knowing the seed.
    hasher: foldhash::fast::RandomState,
    /// Mask of the run bits of a key's last byte.
    run_mask: u8,
}

impl PointCache {
    /// A cache holding at most about `capacity_bytes` of keys and values, caching keys in runs
    /// of `2^run_bits` (at most [`MAX_RUN_BITS`]; see the module docs).
    pub(crate) fn new(capacity_bytes: u64, run_bits: u8) -> Self {
        let per_shard = (capacity_bytes / SHARDS as u64).max((RUN_OVERHEAD + SLOT_OVERHEAD) * 4);
        let estimated_items = usize::try_from(per_shard / 256).unwrap_or(1024).max(16);
        let shards = std::array::from_fn(|_| {
            Mutex::new(Shard {
                map: Map::with(
                    estimated_items,
                    per_shard,
                    RunWeight,
                    CarriedHash,
                    Default::default(),
                ),
                last_touch: 0,
            })
        });
        Self {
            shards,
            hasher: foldhash::fast::RandomState::default(),
            run_mask: (1u8 << run_bits.min(MAX_RUN_BITS)) - 1,
        }
    }

    /// Splits `key` into its run and its run bits. Without runs (`run_mask` 0) the run key is
    /// the whole key, with tail 0 (no byte of the key is looked at).
    fn split<'a>(&self, key: &'a [u8]) -> Split<'a> {
        if self.run_mask == 0 {
            return Split {
                prefix: key,
                tail: 0,
                low: 0,
            };
        }
        match key.split_last() {
            Some((last, prefix)) => Split {
                prefix,
                tail: u16::from(last & !self.run_mask),
                low: last & self.run_mask,
            },
            None => Split {
                prefix: key,
                tail: EMPTY_KEY_TAIL,
                low: 0,
            },
        }
    }

    /// The run of `split` with the hash `hash` ([`PointCache::hash_of`] of the key).
    fn run<'a>(split: &Split<'a>, hash: u64) -> RunRef<'a> {
        RunRef {
            hash,
            prefix: split.prefix,
            tail: split.tail,
        }
    }

    /// The shard of a run. Its hash's low bits pick the slot inside the shard's table and its
    /// top bits tag the slot, so the shard is picked from bits in between.
    #[allow(clippy::indexing_slicing)] // the index is reduced modulo the array's length
    fn shard(&self, run: RunRef<'_>) -> &Mutex<Shard> {
        &self.shards[((run.hash >> 32) % SHARDS as u64) as usize]
    }

    /// The key's value for a reader at applied epoch `epoch` (rules 2 and 3): a snapshot
    /// reader's, or the applied epoch a latest-value reader loaded before this lookup.
    pub(crate) fn lookup(&self, key: &[u8], epoch: u64) -> Cached {
        let split = self.split(key);
        let run = Self::run(&split, self.hash_split(&split));
        let shard = self.shard(run).lock();
        match shard.map.get(&run).and_then(|r| r.slot(split.low)) {
            Some(slot) if slot.epoch <= epoch => Cached::Hit(slot.value.clone()),
            _ => Cached::Miss,
        }
    }

    /// Offers what a reader at `epoch` read from the LSM after a miss (rule 4).
    pub(crate) fn offer(&self, key: &[u8], value: Option<Slice>, epoch: u64) {
        let split = self.split(key);
        let run = Self::run(&split, self.hash_split(&split));
        let mut shard = self.shard(run).lock();
        if shard.last_touch > epoch {
            return;
        }
        let slot = Slot { value, epoch };
        match shard.map.peek_mut(&run) {
            Some(mut cached) => {
                cached.put(split.low, slot, true);
            }
            None => shard
                .map
                .insert(CacheKey::new(run), Run::single(split.low, slot)),
        }
        shard.fit();
    }

    /// The hash of `key`'s run in this cache, for [`PointCache::stage_hashed`] and
    /// [`PointCache::forget_hashed`] (a committer hashes each key once, outside the append
    /// lock).
    pub(crate) fn hash_of(&self, key: &[u8]) -> u64 {
        self.hash_split(&self.split(key))
    }

    /// The keyed hash of the prefix, with the tail mixed in by an odd multiplier (distinct
    /// tails of one prefix get distinct hashes).
    fn hash_split(&self, split: &Split<'_>) -> u64 {
        let tail = u64::from(split.tail).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.hasher.hash_one(split.prefix).wrapping_add(tail)
    }

    /// Rule 1, before a commit with `epoch` that writes `value` to `key` is applied.
    #[cfg(test)]
    pub(crate) fn stage(&self, key: &[u8], value: Option<Slice>, epoch: u64) {
        self.stage_hashed(self.hash_of(key), key, value, epoch);
    }

    /// [`PointCache::stage`] with the key's [`PointCache::hash_of`]. Returns the value the
    /// entry held, for the caller to drop outside the shard lock (with others, see
    /// [`crate::slice::drop_prefetched`]).
    pub(crate) fn stage_hashed(
        &self,
        hash: u64,
        key: &[u8],
        value: Option<Slice>,
        epoch: u64,
    ) -> Option<Slice> {
        let split = self.split(key);
        let run = Self::run(&split, hash);
        let mut shard = self.shard(run).lock();
        shard.last_touch = shard.last_touch.max(epoch);
        let slot = Slot { value, epoch };
        let replaced = match shard.map.get_mut(&run) {
            Some(mut cached) => cached.put(split.low, slot, false),
            None => {
                shard
                    .map
                    .insert(CacheKey::new(run), Run::single(split.low, slot));
                None
            }
        };
        shard.fit();
        replaced
    }

    /// Asks the CPU to bring in the cache entry a [`PointCache::stage_hashed`] of `key` (with
    /// its [`PointCache::hash_of`]) will read, without waiting: a committer prefetches all its
    /// keys before staging them, so their cache misses overlap instead of following one
    /// another. Changes nothing in the cache.
    pub(crate) fn prefetch_hashed(&self, hash: u64, key: &[u8]) {
        let split = self.split(key);
        let run = Self::run(&split, hash);
        self.shard(run).lock().map.prefetch(&run);
    }

    /// Drops the entry of a key whose commit failed to apply after [`PointCache::stage`].
    pub(crate) fn forget_hashed(&self, hash: u64, key: &[u8]) {
        let split = self.split(key);
        let run = Self::run(&split, hash);
        let mut shard = self.shard(run).lock();
        let emptied = shard.map.peek_mut(&run).is_some_and(|mut cached| {
            cached.remove(split.low);
            cached.slots.is_empty()
        });
        if emptied {
            shard.map.remove(&run);
        }
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
        let cache = PointCache::new(1 << 20, 0);
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
        let cache = PointCache::new(1 << 20, 0);
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
        let cache = PointCache::new(1 << 20, 0);
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
        let cache = PointCache::new(1 << 20, 0);
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
        let cache = PointCache::new(64 * 1024, 0);
        for i in 0..10_000u32 {
            let key = i.to_be_bytes();
            cache.stage(&key, Some(Slice::from(vec![0u8; 100])), u64::from(i) + 1);
        }
        let weight: u64 = cache.shards.iter().map(|s| s.lock().map.weight()).sum();
        assert!(weight <= 64 * 1024 + SHARDS as u64 * 300, "weight {weight}");
    }

    #[test]
    fn keys_of_one_run_keep_their_own_values_and_epochs() {
        let cache = PointCache::new(1 << 20, MAX_RUN_BITS);
        let key = |n: u8| [b't', 0, n];
        for n in [0u8, 5, 63, 64, 200] {
            cache.stage(&key(n), Some(Slice::from(vec![n])), u64::from(n) + 1);
        }
        for n in [0u8, 5, 63, 64, 200] {
            let epoch = u64::from(n) + 1;
            assert_eq!(value(&cache.lookup(&key(n), epoch)), Some(Some(vec![n])));
            assert_eq!(value(&cache.lookup(&key(n), epoch - 1)), None, "key {n}");
        }
        assert_eq!(value(&cache.lookup(&key(1), 999)), None, "never cached");
        // A failed commit drops only its own key; an offer fills an empty slot of a run.
        cache.stage(&key(5), None, 300);
        cache.forget_hashed(cache.hash_of(&key(5)), &key(5));
        assert_eq!(value(&cache.lookup(&key(5), 999)), None);
        assert_eq!(value(&cache.lookup(&key(0), 999)), Some(Some(vec![0])));
        cache.offer(&key(1), None, 300);
        assert_eq!(value(&cache.lookup(&key(1), 300)), Some(None));
        cache.offer(&key(0), None, 300);
        assert_eq!(value(&cache.lookup(&key(0), 300)), Some(Some(vec![0])));
        // The empty key and a key of one byte are distinct runs.
        cache.stage(b"", Some(Slice::from(&b"e"[..])), 301);
        cache.stage(&[0], Some(Slice::from(&b"z"[..])), 301);
        assert_eq!(value(&cache.lookup(b"", 301)), Some(Some(b"e".to_vec())));
        assert_eq!(value(&cache.lookup(&[0], 301)), Some(Some(b"z".to_vec())));
    }

    #[test]
    fn weight_of_runs_stays_bounded() {
        let cache = PointCache::new(64 * 1024, MAX_RUN_BITS);
        for i in 0..10_000u32 {
            let key = i.to_be_bytes();
            cache.stage(&key, Some(Slice::from(vec![0u8; 100])), u64::from(i) + 1);
        }
        let weight: u64 = cache.shards.iter().map(|s| s.lock().map.weight()).sum();
        assert!(weight <= 64 * 1024 + SHARDS as u64 * 300, "weight {weight}");
    }
}
