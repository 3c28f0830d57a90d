// Copyright (c) 2024-present, fjall-rs
// This source code is licensed under both the Apache 2.0 and MIT License
// (found in the LICENSE-* files in the repository)

// Orcinus patch: the memtable keeps, per user key, a chain of its versions (newest first)
// under one skiplist node, instead of one skiplist node per version, and an insert may prune
// the versions no reader can see any more ([`Memtable::insert_pruning`]). Under overwrites of
// a hot set of keys the memtable then holds about one version per key: an insert searches a
// skiplist of distinct keys, and the memtable reaches its flush trigger (bytes or entries, both
// counting linked versions only) far less often, so the flush worker no longer walks and frees
// tens of thousands of dead versions per flush. Iteration order and read results are those of
// the upstream memtable (user key ascending, then seqno descending).

use crate::key::InternalKey;
use crate::{
    value::{InternalValue, SeqNo, UserKey, UserValue},
    ValueType,
};
use crossbeam_epoch::{self as epoch, Atomic, Guard, Owned, Shared};
use crossbeam_skiplist::{map::Entry, SkipMap};
use std::collections::VecDeque;
use std::hash::BuildHasher;
use std::ops::{Bound, RangeBounds};
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
use std::sync::Mutex;

pub use crate::tree::inner::MemtableId;

/// One version of a user key.
struct Version {
    seqno: SeqNo,
    value_type: ValueType,
    value: UserValue,
    /// The next older version of the same key.
    next: Atomic<Version>,
}

/// The versions of one user key, by seqno descending.
///
/// Versions are linked and unlinked only under [`Memtable::write_lock`]; readers walk the chain
/// without a lock, inside an epoch guard. An unlinked version is destroyed through the epoch
/// collector, so a reader that reached it can still follow its `next`.
#[derive(Default)]
struct Chain {
    head: Atomic<Version>,
}

impl Drop for Chain {
    fn drop(&mut self) {
        // SAFETY: dropping the chain means the skiplist drops its node: no reader can reach
        // the chain any more, and unlinked versions were handed to the collector, not kept here.
        unsafe {
            let guard = epoch::unprotected();
            let mut current = self.head.load(Relaxed, guard);
            while !current.is_null() {
                let next = current.deref().next.load(Relaxed, guard);
                drop(current.into_owned());
                current = next;
            }
        }
    }
}

/// A chain inside a skiplist node of [`Memtable::items`]. Keys are never removed from the
/// skiplist, so its nodes stay where they are until the memtable is dropped.
#[derive(Clone, Copy)]
struct ChainRef(*const Chain);

// SAFETY: a `ChainRef` is only dereferenced under the write lock while its memtable lives, and
// `Chain` itself is `Send + Sync`.
unsafe impl Send for ChainRef {}
unsafe impl Sync for ChainRef {}

/// What the writers share under [`Memtable::write_lock`]: the chain of each key, so an
/// overwrite finds its key's chain with one hash probe instead of a search down the skiplist.
/// Keyed foldhash (seeded at random per memtable), so clients cannot choose keys that collide
/// without knowing the seed; it costs a fraction of std's SipHash on short keys.
#[derive(Default)]
struct Writers {
    hasher: foldhash::fast::RandomState,
    chains: hashbrown::HashTable<(UserKey, ChainRef)>,
}

/// What [`Memtable::insert_batch_pruning`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Inserted {
    /// Bytes of the inserted items.
    pub added: u64,
    /// The memtable's size afterwards.
    pub size_after: u64,
    /// Bytes of the versions unlinked (the caller frees them from any write buffer accounting
    /// that counted them).
    pub freed: u64,
}

/// Destroys versions unlinked from their chains, once no reader can reach them (run by the
/// epoch collector). They are prefetched first so that their misses, and those of their
/// values' allocations, overlap.
fn destroy(unlinked: Vec<Shared<'_, Version>>) {
    for version in &unlinked {
        prefetch(version.as_raw().cast());
    }
    for version in &unlinked {
        // SAFETY: unlinked versions stay allocated until this function drops them.
        unsafe { version.deref() }.value.prefetch();
    }
    for version in unlinked {
        // SAFETY: no reader can reach the version any more, and it is dropped only here.
        drop(unsafe { version.into_owned() });
    }
}

/// Asks the CPU to bring the cache line of `address` in, without waiting for it (no-op off
/// x86-64). Any address is allowed: a prefetch never faults.
#[inline(always)]
fn prefetch(address: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_prefetch` only hints the cache; it reads nothing and cannot fault.
    unsafe {
        std::arch::x86_64::_mm_prefetch(address.cast::<i8>(), std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

/// Bytes a version is accounted for (the upstream per-entry formula).
fn entry_size(user_key: &[u8], value: &[u8]) -> u64 {
    // Keys are limited to 16-bit lengths and values to 32-bit lengths.
    (user_key.len() + value.len() + std::mem::size_of::<InternalValue>()) as u64
}

/// The memtable serves as an intermediary, ephemeral, sorted storage for new items
///
/// When the Memtable exceeds some size, it should be flushed to a table.
pub struct Memtable {
    #[doc(hidden)]
    pub id: MemtableId,

    /// User keys, each with its chain of versions.
    items: SkipMap<UserKey, Chain>,

    /// Serialises chain edits (inserts and pruning); holds the writers' index of chains.
    write_lock: Mutex<Writers>,

    /// Linked versions.
    version_count: AtomicUsize,

    /// Approximate active memtable size (linked versions).
    ///
    /// If this grows too large, a flush is triggered.
    pub(crate) approximate_size: AtomicU64,

    /// Highest encountered sequence number.
    ///
    /// This is used so that `get_highest_seqno` has O(1) complexity.
    pub(crate) highest_seqno: AtomicU64,

    pub(crate) requested_rotation: AtomicBool,
}

impl Memtable {
    /// Returns the memtable ID.
    pub fn id(&self) -> MemtableId {
        self.id
    }

    /// Returns `true` if the memtable was already flagged for rotation.
    pub fn is_flagged_for_rotation(&self) -> bool {
        self.requested_rotation
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Flags the memtable as requested for rotation.
    pub fn flag_rotated(&self) {
        self.requested_rotation
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    #[doc(hidden)]
    #[must_use]
    pub fn new(id: MemtableId) -> Self {
        Self {
            id,
            items: SkipMap::default(),
            write_lock: Mutex::new(Writers::default()),
            version_count: AtomicUsize::default(),
            approximate_size: AtomicU64::default(),
            highest_seqno: AtomicU64::default(),
            requested_rotation: AtomicBool::default(),
        }
    }

    /// Creates an iterator over all items.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = InternalValue> + '_ {
        Versions::new(self.items.iter(), Bound::Unbounded, Bound::Unbounded)
    }

    /// Creates an iterator over a range of items.
    pub(crate) fn range<'a, R: RangeBounds<InternalKey> + 'a>(
        &'a self,
        range: R,
    ) -> impl DoubleEndedIterator<Item = InternalValue> + 'a {
        let lower = range.start_bound().cloned();
        let upper = range.end_bound().cloned();
        // Every version of a bound's user key may be in range; `Versions` filters them.
        let key_bound = |bound: &Bound<InternalKey>| match bound {
            Bound::Included(k) | Bound::Excluded(k) => Bound::Included(k.user_key.clone()),
            Bound::Unbounded => Bound::Unbounded,
        };
        let keys = self
            .items
            .range::<UserKey, _>((key_bound(&lower), key_bound(&upper)));
        Versions::new(keys, lower, upper)
    }

    /// Returns the item by key if it exists.
    ///
    /// The item with the highest seqno below `seqno` is returned.
    #[doc(hidden)]
    pub fn get(&self, key: &[u8], seqno: SeqNo) -> Option<InternalValue> {
        if seqno == 0 {
            return None;
        }
        let entry = self.items.get(key)?;
        let guard = epoch::pin();
        let mut current = entry.value().head.load(Acquire, &guard);
        // SAFETY: versions are destroyed only through the collector, and we are pinned.
        while let Some(version) = unsafe { current.as_ref() } {
            if version.seqno < seqno {
                return Some(InternalValue {
                    key: InternalKey::new(entry.key().clone(), version.seqno, version.value_type),
                    value: version.value.clone(),
                });
            }
            current = version.next.load(Acquire, &guard);
        }
        None
    }

    /// Gets approximate size of memtable in bytes.
    pub fn size(&self) -> u64 {
        self.approximate_size
            .load(std::sync::atomic::Ordering::Acquire)
    }

    /// Counts the number of items (linked versions) in the memtable.
    pub fn len(&self) -> usize {
        self.version_count.load(Acquire)
    }

    /// Orcinus patch: counts the keys in the memtable (each has one or more linked versions).
    pub fn key_count(&self) -> usize {
        self.items.len()
    }

    /// Orcinus patch: unlinks, in the chain of every key, the versions that no reader can see
    /// any more, as a write of each key with `gc_watermark` would (see
    /// [`Memtable::insert_pruning`] for what `gc_watermark` must be). Returns the bytes
    /// unlinked, already taken off the memtable's size (the caller frees them from any write
    /// buffer accounting that counted them).
    ///
    /// A write can only unlink what the watermark allowed when it ran, and the watermark is
    /// always behind the write (the version a write replaces stays visible until the write is
    /// published and every older snapshot closed); so each key that is overwritten keeps its
    /// previous version until its next write. Under a hot set, about half the memtable can be
    /// such versions. One pass over the keys, under the write lock, unlinks them.
    #[doc(hidden)]
    pub fn prune_all(&self, gc_watermark: SeqNo) -> u64 {
        let guard = epoch::pin();
        #[expect(clippy::expect_used, reason = "lock is expected to not be poisoned")]
        let writers = self.write_lock.lock().expect("lock is poisoned");
        let mut unlinked = Vec::new();
        let mut freed = 0;
        for (user_key, chain) in &writers.chains {
            // SAFETY: see `ChainRef`; versions are unlinked only under the write lock (held)
            // and destroyed through the collector (we are pinned).
            let chain = unsafe { &*chain.0 };
            freed += Self::prune(chain, user_key, gc_watermark, &guard, &mut unlinked);
        }
        self.retire(&guard, unlinked, freed);
        drop(writers);
        freed
    }

    /// Takes the versions `unlinked` (of `freed` bytes) off the counts and hands them to the
    /// collector; returns the memtable's size afterwards. Called under the write lock, by the
    /// code that unlinked them, pinned by `guard`.
    fn retire<'g>(&self, guard: &'g Guard, unlinked: Vec<Shared<'g, Version>>, freed: u64) -> u64 {
        self.version_count.fetch_sub(unlinked.len(), AcqRel);
        let size_after = self.approximate_size.fetch_sub(freed, AcqRel) - freed;
        if !unlinked.is_empty() {
            // SAFETY: the versions were unlinked under the write lock; readers that still hold
            // one are pinned, so the collector runs this after them.
            unsafe { guard.defer_unchecked(move || destroy(unlinked)) };
        }
        size_after
    }

    /// Returns `true` if the memtable is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Inserts an item into the memtable
    #[doc(hidden)]
    pub fn insert(&self, item: InternalValue) -> (u64, u64) {
        let (item_size, size_after, _) = self.insert_pruning(item, None);
        (item_size, size_after)
    }

    /// Inserts an item into the memtable and, given `gc_watermark`, unlinks the versions of its
    /// key that no reader can see.
    ///
    /// `gc_watermark` must be a seqno such that every current and future reader of this
    /// memtable reads at a seqno above it (it sees every version `<= gc_watermark`): the
    /// snapshot tracker's seqno safe to GC, which is at most the lowest open snapshot's instant
    /// minus one. Then the newest version `<= gc_watermark` of the key is visible to every
    /// reader, and the versions older than it to none: they are unlinked (a weak tombstone
    /// there stops this: it must meet the value it cancels). The new item itself is never
    /// unlinked.
    ///
    /// Returns the item's size, the memtable's size afterwards, and the bytes unlinked (which
    /// the caller frees from any write buffer accounting that counted them).
    #[doc(hidden)]
    pub fn insert_pruning(
        &self,
        item: InternalValue,
        gc_watermark: Option<SeqNo>,
    ) -> (u64, u64, u64) {
        let inserted = self.insert_batch_pruning(vec![item], gc_watermark);
        (inserted.added, inserted.size_after, inserted.freed)
    }

    /// Inserts `items` in order, exactly as [`Memtable::insert_pruning`] one by one would (a
    /// later item with the key and seqno of an earlier one replaces it), under one lock.
    ///
    /// Why a batch: an overwrite touches memory no other write of the batch touches (the
    /// key's hash slot, its skiplist node, its newest version, the version it unlinks), and
    /// under a working set bigger than the CPU cache each is a miss. One by one those misses
    /// are serial, each waiting for the last; here each step is first done for every item (the
    /// chains looked up, then their heads and versions prefetched), so the misses of the whole
    /// batch are in flight together, and the links are made on cached memory.
    #[doc(hidden)]
    pub fn insert_batch_pruning(
        &self,
        items: Vec<InternalValue>,
        gc_watermark: Option<SeqNo>,
    ) -> Inserted {
        let guard = epoch::pin();
        #[expect(clippy::expect_used, reason = "lock is expected to not be poisoned")]
        let mut writers = self.write_lock.lock().expect("lock is poisoned");

        // The hashes first: then the probes below are short, independent iterations whose
        // misses the CPU overlaps.
        let hashes: Vec<u64> = items
            .iter()
            .map(|item| writers.hasher.hash_one(&item.key.user_key))
            .collect();
        // In order, so that a key repeated in the batch finds the chain its first item made.
        let placed: Vec<(InternalValue, ChainRef)> = items
            .into_iter()
            .zip(hashes)
            .map(|(item, hash)| {
                assert!(
                    u16::try_from(item.key.user_key.len()).is_ok(),
                    "keys can be 65535 bytes in length",
                );
                let chain = self.chain_of(&mut writers, hash, &item.key.user_key);
                (item, chain)
            })
            .collect();
        // SAFETY (all three loops): see `ChainRef`; versions are unlinked only under the write
        // lock (held) and destroyed through the collector (we are pinned).
        for (_, chain) in &placed {
            prefetch(chain.0.cast());
        }
        for (_, chain) in &placed {
            let chain = unsafe { &*chain.0 };
            prefetch(chain.head.load(Acquire, &guard).as_raw().cast());
        }
        for (_, chain) in &placed {
            let chain = unsafe { &*chain.0 };
            if let Some(head) = unsafe { chain.head.load(Acquire, &guard).as_ref() } {
                prefetch(head.next.load(Acquire, &guard).as_raw().cast());
            }
        }

        let mut added = 0u64;
        let mut freed = 0u64;
        let mut highest = 0;
        let mut unlinked = Vec::new();
        let count = placed.len();
        for (item, chain) in placed {
            added += entry_size(&item.key.user_key, &item.value);
            highest = highest.max(item.key.seqno);
            // SAFETY: see `ChainRef`.
            let chain = unsafe { &*chain.0 };
            freed += Self::link(chain, item, gc_watermark, &guard, &mut unlinked);
        }

        // Counted under the lock: additions come first, so no subtraction ever goes below
        // zero.
        self.version_count.fetch_add(count, AcqRel);
        self.approximate_size.fetch_add(added, AcqRel);
        let size_after = self.retire(&guard, unlinked, freed);
        drop(writers);

        self.highest_seqno.fetch_max(highest, AcqRel);
        Inserted {
            added,
            size_after,
            freed,
        }
    }
    /// The chain of `user_key` (whose hash in `writers` is `hash`), made (with the key's
    /// skiplist node) if the key is new.
    fn chain_of(&self, writers: &mut Writers, hash: u64, user_key: &UserKey) -> ChainRef {
        if let Some((_, chain)) = writers.chains.find(hash, |(key, _)| key == user_key) {
            return *chain;
        }
        let entry = self.items.get_or_insert(user_key.clone(), Chain::default());
        let chain = ChainRef(entry.value());
        let hasher = &writers.hasher;
        writers
            .chains
            .insert_unique(hash, (user_key.clone(), chain), |(key, _)| hasher.hash_one(key));
        chain
    }

    /// Links `item` into `chain` (its key's) and, given `gc_watermark`, unlinks the versions
    /// older than the newest one `<= gc_watermark`, as [`Memtable::insert_pruning`] says; a
    /// version of the same seqno is replaced. The unlinked versions are pushed to `unlinked`;
    /// returns their bytes. Called under the write lock.
    fn link<'g>(
        chain: &Chain,
        item: InternalValue,
        gc_watermark: Option<SeqNo>,
        guard: &'g Guard,
        unlinked: &mut Vec<Shared<'g, Version>>,
    ) -> u64 {
        let InternalValue { key, value } = item;
        let InternalKey {
            user_key,
            seqno,
            value_type,
        } = key;
        let mut freed = 0;

        // Find the link to the first version not newer than `seqno`.
        let mut link = &chain.head;
        let mut current = link.load(Acquire, guard);
        // SAFETY: chain versions are unlinked only under the write lock (held) and destroyed
        // through the collector (we are pinned).
        while let Some(version) = unsafe { current.as_ref() } {
            if version.seqno <= seqno {
                break;
            }
            link = &version.next;
            current = version.next.load(Acquire, guard);
        }

        // A version with the same seqno is replaced, as the upstream skiplist replaced an
        // entry with an equal key.
        let mut after = current;
        // SAFETY: as above.
        if let Some(version) = unsafe { current.as_ref() } {
            if version.seqno == seqno {
                freed += entry_size(&user_key, &version.value);
                unlinked.push(current);
                after = version.next.load(Acquire, guard);
            }
        }

        let new = Owned::new(Version {
            seqno,
            value_type,
            value,
            next: Atomic::null(),
        });
        new.next.store(after, Relaxed);
        link.store(new, Release);

        if let Some(watermark) = gc_watermark {
            freed += Self::prune(chain, &user_key, watermark, guard, unlinked);
        }
        freed
    }

    /// Unlinks the versions in `chain` (of `user_key`) older than its newest version
    /// `<= watermark` (see [`Memtable::insert_pruning`]), pushing them to `unlinked`; returns
    /// their bytes. Called under the write lock.
    fn prune<'g>(
        chain: &Chain,
        user_key: &[u8],
        watermark: SeqNo,
        guard: &'g Guard,
        unlinked: &mut Vec<Shared<'g, Version>>,
    ) -> u64 {
        let mut current = chain.head.load(Acquire, guard);
        // SAFETY: see `link`.
        let keep = loop {
            match unsafe { current.as_ref() } {
                None => return 0,
                Some(version) if version.seqno <= watermark => break version,
                Some(version) => current = version.next.load(Acquire, guard),
            }
        };
        if keep.value_type == ValueType::WeakTombstone {
            return 0;
        }
        let mut tail = keep.next.load(Acquire, guard);
        if tail.is_null() {
            return 0;
        }
        keep.next.store(Shared::null(), Release);

        let mut bytes = 0;
        // SAFETY: the tail is unlinked under the write lock.
        while let Some(version) = unsafe { tail.as_ref() } {
            bytes += entry_size(user_key, &version.value);
            unlinked.push(tail);
            tail = version.next.load(Acquire, guard);
        }
        bytes
    }

    /// Returns the highest sequence number in the memtable.
    pub fn get_highest_seqno(&self) -> Option<SeqNo> {
        if self.is_empty() {
            None
        } else {
            Some(
                self.highest_seqno
                    .load(std::sync::atomic::Ordering::Acquire),
            )
        }
    }
}

/// Iterates the versions of the keys yielded by `keys` (user key ascending, then seqno
/// descending), keeping those inside `lower..upper`: the versions of one key are copied out
/// under an epoch guard when its entry is reached, so the iterator holds no guard between
/// calls.
struct Versions<'a, I: DoubleEndedIterator<Item = Entry<'a, UserKey, Chain>>> {
    keys: I,
    lower: Bound<InternalKey>,
    upper: Bound<InternalKey>,
    front: VecDeque<InternalValue>,
    back: VecDeque<InternalValue>,
}

impl<'a, I: DoubleEndedIterator<Item = Entry<'a, UserKey, Chain>>> Versions<'a, I> {
    fn new(keys: I, lower: Bound<InternalKey>, upper: Bound<InternalKey>) -> Self {
        Self {
            keys,
            lower,
            upper,
            front: VecDeque::new(),
            back: VecDeque::new(),
        }
    }

    fn in_range(&self, key: &InternalKey) -> bool {
        let above_lower = match &self.lower {
            Bound::Included(lower) => key >= lower,
            Bound::Excluded(lower) => key > lower,
            Bound::Unbounded => true,
        };
        let below_upper = match &self.upper {
            Bound::Included(upper) => key <= upper,
            Bound::Excluded(upper) => key < upper,
            Bound::Unbounded => true,
        };
        above_lower && below_upper
    }

    /// Appends the in-range versions of `entry`'s key to `buffer`, newest first.
    fn load(&self, entry: &Entry<'a, UserKey, Chain>, buffer: &mut VecDeque<InternalValue>) {
        let guard = epoch::pin();
        let mut current = entry.value().head.load(Acquire, &guard);
        // SAFETY: versions are destroyed only through the collector, and we are pinned.
        while let Some(version) = unsafe { current.as_ref() } {
            let key = InternalKey::new(entry.key().clone(), version.seqno, version.value_type);
            if self.in_range(&key) {
                buffer.push_back(InternalValue {
                    key,
                    value: version.value.clone(),
                });
            }
            current = version.next.load(Acquire, &guard);
        }
    }
}

impl<'a, I: DoubleEndedIterator<Item = Entry<'a, UserKey, Chain>>> Iterator for Versions<'a, I> {
    type Item = InternalValue;

    fn next(&mut self) -> Option<InternalValue> {
        loop {
            if let Some(item) = self.front.pop_front() {
                return Some(item);
            }
            match self.keys.next() {
                Some(entry) => {
                    let mut buffer = std::mem::take(&mut self.front);
                    self.load(&entry, &mut buffer);
                    self.front = buffer;
                }
                None => return self.back.pop_front(),
            }
        }
    }
}

impl<'a, I: DoubleEndedIterator<Item = Entry<'a, UserKey, Chain>>> DoubleEndedIterator
    for Versions<'a, I>
{
    fn next_back(&mut self) -> Option<InternalValue> {
        loop {
            if let Some(item) = self.back.pop_back() {
                return Some(item);
            }
            match self.keys.next_back() {
                Some(entry) => {
                    let mut buffer = std::mem::take(&mut self.back);
                    self.load(&entry, &mut buffer);
                    self.back = buffer;
                }
                None => return self.front.pop_back(),
            }
        }
    }
}

#[cfg(test)]
mod tests;
