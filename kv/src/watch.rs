//! WATCH support: an epoch per watched key, bumped by every write transaction that locked the
//! key, before it commits (while it still holds the key lock). EXEC locks its watched keys and
//! then compares epochs, so a write that committed after WATCH is always seen. Only keys that
//! some session watches are tracked; the map entry goes when its last watcher does.

use bytes::Bytes;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Debug, Default)]
struct WatchedKey {
    watchers: usize,
    epoch: u64,
}

/// Epochs of watched keys.
#[derive(Default)]
pub struct Watches {
    keys: Mutex<HashMap<(u8, Bytes), WatchedKey>>,
    // Fast path: writers skip the map when nobody watches anything.
    watched_count: AtomicUsize,
}

impl Watches {
    /// Number of distinct watched keys.
    #[must_use]
    pub fn len(&self) -> usize {
        self.keys.lock().len()
    }

    /// True if no key is watched.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Starts watching; returns the epoch to compare at EXEC.
    pub fn watch(&self, db: u8, key: Bytes) -> u64 {
        let mut keys = self.keys.lock();
        let entry = keys.entry((db, key)).or_default();
        entry.watchers += 1;
        self.watched_count.fetch_add(1, Ordering::Relaxed);
        entry.epoch
    }

    /// Stops watching `watched` (the session's list).
    pub fn unwatch(&self, watched: &[(u8, Bytes, u64)]) {
        if watched.is_empty() {
            return;
        }
        let mut keys = self.keys.lock();
        for (db, key, _) in watched {
            let map_key = (*db, key.clone());
            if let Some(entry) = keys.get_mut(&map_key) {
                entry.watchers = entry.watchers.saturating_sub(1);
                if entry.watchers == 0 {
                    keys.remove(&map_key);
                }
                self.watched_count.fetch_sub(1, Ordering::Relaxed);
            }
        }
    }

    /// Marks keys as modified.
    pub fn touch<'k>(&self, touched: impl IntoIterator<Item = (u8, &'k [u8])>) {
        if self.watched_count.load(Ordering::Relaxed) == 0 {
            return;
        }
        let mut keys = self.keys.lock();
        for (db, key) in touched {
            if let Some(entry) = keys.get_mut(&(db, Bytes::copy_from_slice(key))) {
                entry.epoch += 1;
            }
        }
    }

    /// Marks every key as modified (FLUSHDB / FLUSHALL).
    pub fn touch_all(&self) {
        let mut keys = self.keys.lock();
        for entry in keys.values_mut() {
            entry.epoch += 1;
        }
    }

    /// True if any of `watched` changed since it was watched.
    #[must_use]
    pub fn any_changed(&self, watched: &[(u8, Bytes, u64)]) -> bool {
        let keys = self.keys.lock();
        watched.iter().any(|(db, key, epoch)| {
            keys.get(&(*db, key.clone()))
                .is_none_or(|entry| entry.epoch != *epoch)
        })
    }
}
