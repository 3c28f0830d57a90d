//! [`Snapshot`]: a consistent read view across keyspaces, with point reads and forward /
//! reverse range and prefix iteration.

use crate::Slice;
use crate::engine::Keyspace;
use crate::error::Result;
use fjall::Readable;
use std::ops::Bound;

/// A key-value pair yielded by iteration.
pub type KvPair = (Slice, Slice);

/// A boxed double-ended iterator over key-value pairs in key order.
pub type KvIter<'a> = Box<dyn DoubleEndedIterator<Item = Result<KvPair>> + Send + 'a>;

/// A consistent point-in-time view. Holding it pins old versions; drop it promptly.
#[derive(Clone)]
pub struct Snapshot {
    pub(crate) inner: fjall::Snapshot,
}

pub(crate) fn wrap_iter<'a>(iter: fjall::Iter) -> KvIter<'a> {
    Box::new(iter.map(|guard| {
        let (k, v) = guard.into_inner()?;
        Ok((Slice(k), Slice(v)))
    }))
}

impl Snapshot {
    pub(crate) fn new(inner: fjall::Snapshot) -> Self {
        Self { inner }
    }

    /// Point read.
    pub fn get(&self, ks: &Keyspace, key: &[u8]) -> Result<Option<Slice>> {
        Ok(self.inner.get(&ks.inner, key)?.map(Slice))
    }

    /// Iterates keys within the bounds, in order (reverse with `.rev()`).
    pub fn range(
        &self,
        ks: &Keyspace,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
    ) -> KvIter<'static> {
        wrap_iter(self.inner.range::<&[u8], _>(&ks.inner, (lower, upper)))
    }

    /// Iterates keys starting with `prefix`, in order (reverse with `.rev()`).
    pub fn prefix(&self, ks: &Keyspace, prefix: &[u8]) -> KvIter<'static> {
        wrap_iter(self.inner.prefix(&ks.inner, prefix))
    }
}

/// The upper bound of all keys starting with `prefix`, or `Unbounded` for an all-0xFF prefix.
#[must_use]
pub fn prefix_upper_bound(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < u8::MAX {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}
