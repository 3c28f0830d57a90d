//! [`WriteBatch`]: an atomic, durable group of puts and deletes across keyspaces, without locks.
//! Use it for bulk loads and for writes that are already serialized by the caller; concurrent
//! transactional writers of the same keys must use [`crate::Transaction`].

use crate::Slice;
use crate::engine::{CacheWrite, Engine, Keyspace};
use crate::error::Result;
use crate::group_commit::DurabilityTicket;

/// An atomic batch of writes.
pub struct WriteBatch {
    engine: Engine,
    inner: fjall::OwnedWriteBatch,
    /// The writes to keyspaces with a point cache (kept coherent by `Engine::append`).
    cached: Vec<CacheWrite>,
}

impl WriteBatch {
    pub(crate) fn new(engine: Engine) -> Self {
        let inner = engine.lsm_batch();
        Self {
            engine,
            inner,
            cached: Vec::new(),
        }
    }

    /// Sets `key` to `value`. Fails (adding nothing) if the key or value breaks the limits.
    pub fn put(
        &mut self,
        ks: &Keyspace,
        key: impl Into<Vec<u8>>,
        value: impl Into<Vec<u8>>,
    ) -> Result<()> {
        let (key, value) = (key.into(), value.into());
        crate::check_entry(&key, value.len())?;
        if let Some(cache) = &ks.cache {
            let (key, value) = (Slice::from(key), Slice::from(value));
            self.cached
                .push(CacheWrite::new(cache, key.clone(), Some(value.clone())));
            self.inner.insert(&ks.inner, key.0, value.0);
            return Ok(());
        }
        self.inner.insert(&ks.inner, key, value);
        Ok(())
    }

    /// Removes `key`. Fails (adding nothing) for an empty or oversized key.
    pub fn delete(&mut self, ks: &Keyspace, key: impl Into<Vec<u8>>) -> Result<()> {
        let key = key.into();
        crate::check_entry(&key, 0)?;
        if let Some(cache) = &ks.cache {
            let key = Slice::from(key);
            self.cached.push(CacheWrite::new(cache, key.clone(), None));
            self.inner.remove(&ks.inner, key.0);
            return Ok(());
        }
        self.inner.remove(&ks.inner, key);
        Ok(())
    }

    /// Number of operations in the batch.
    #[must_use]
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// True if the batch holds no operation.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// Applies the batch atomically and returns once it is durable under the sync policy.
    pub async fn commit(self) -> Result<()> {
        self.commit_deferred()?.wait().await
    }

    /// Applies the batch atomically (readers see it at once) and returns the ticket for its
    /// durability, without waiting for it.
    pub fn commit_deferred(self) -> Result<DurabilityTicket> {
        if self.inner.is_empty() {
            return Ok(DurabilityTicket::ready());
        }
        self.engine.append(self.inner, self.cached)
    }
}
