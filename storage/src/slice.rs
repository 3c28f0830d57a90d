//! [`Slice`]: an immutable, cheaply clonable byte string returned by reads. It wraps the LSM's
//! own reference-counted buffer so values are handed out without copying, and a value built with
//! [`Slice::concat`] goes into the LSM without another copy (a large value is copied once, from
//! the request buffer into the LSM's buffer, before the journal write).

use std::fmt;
use std::ops::Deref;

/// Immutable bytes (a key or a value) returned by the engine.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Slice(pub(crate) fjall::Slice);

impl Slice {
    /// The concatenation of `parts`, in one allocation and one copy (building a `Vec` and
    /// converting it would copy twice: the LSM's buffer is its own allocation).
    #[must_use]
    pub fn concat(parts: &[&[u8]]) -> Self {
        if let [left, right] = parts {
            // The common case (a header and a payload): the buffer is filled by the copies
            // alone, not zeroed first and then read into.
            return Self(fjall::Slice::from(byteview::ByteView::fused(left, right)));
        }
        let len = parts.iter().map(|p| p.len()).sum();
        let mut reader = PartsReader {
            rest: parts.iter(),
            current: &[],
        };
        match fjall::Slice::from_reader(&mut reader, len) {
            Ok(slice) => Self(slice),
            // Reading from memory cannot fail; stay correct if it ever does.
            Err(_) => Self::from(parts.concat()),
        }
    }

    /// Copies the bytes into a new vector.
    #[must_use]
    pub fn to_vec(&self) -> Vec<u8> {
        self.0.to_vec()
    }
}

/// Drops `slices` with their allocations prefetched first: dropping a shared slice decrements
/// a count in its allocation, a cache miss if the slice was written long ago, and this way the
/// misses of all of them overlap instead of following one another.
pub(crate) fn drop_prefetched(slices: Vec<Slice>) {
    for slice in &slices {
        slice.0.prefetch();
    }
    drop(slices);
}

impl Deref for Slice {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

/// Sound for maps keyed by `Slice` and looked up by `&[u8]`: equality, order and hash are
/// those of the bytes.
impl std::borrow::Borrow<[u8]> for Slice {
    fn borrow(&self) -> &[u8] {
        &self.0
    }
}

impl AsRef<[u8]> for Slice {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl From<&[u8]> for Slice {
    fn from(b: &[u8]) -> Self {
        Self(fjall::Slice::from(b))
    }
}

impl From<Vec<u8>> for Slice {
    fn from(b: Vec<u8>) -> Self {
        Self(fjall::Slice::from(b))
    }
}

impl From<&str> for Slice {
    fn from(s: &str) -> Self {
        Self(fjall::Slice::from(s))
    }
}

impl fmt::Debug for Slice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Slice({:?})", String::from_utf8_lossy(&self.0))
    }
}

/// Reads a list of byte slices one after the other.
struct PartsReader<'a, 'b> {
    rest: std::slice::Iter<'a, &'b [u8]>,
    current: &'b [u8],
}

impl std::io::Read for PartsReader<'_, '_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.current.is_empty() {
            match self.rest.next() {
                Some(part) => self.current = part,
                None => return Ok(0),
            }
        }
        self.current.read(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::Slice;

    #[test]
    fn concat_joins_parts() {
        let big = vec![5u8; 100_000];
        let joined = Slice::concat(&[b"head", b"", &big, b"tail"]);
        assert_eq!(joined.len(), 4 + 100_000 + 4);
        assert_eq!(&joined[..4], b"head");
        assert_eq!(&joined[joined.len() - 4..], b"tail");
        assert_eq!(&*Slice::concat(&[]), b"");
        assert_eq!(&*Slice::concat(&[b"ab", b"c"]), b"abc");
        let two = Slice::concat(&[b"header:", &big]);
        assert_eq!(two.len(), 7 + 100_000);
        assert_eq!(&two[..7], b"header:");
        assert!(two[7..].iter().all(|&b| b == 5));
        assert_eq!(&*Slice::concat(&[b"", b""]), b"");
        assert_eq!(&*Slice::concat(&[b"\x01", b"key"]), b"\x01key");
    }
}
