//! [`Slice`]: an immutable, cheaply clonable byte string returned by reads. It wraps the LSM's
//! own reference-counted buffer so values are handed out without copying.

use std::fmt;
use std::ops::Deref;

/// Immutable bytes (a key or a value) returned by the engine.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Slice(pub(crate) fjall::Slice);

impl Slice {
    /// Copies the bytes into a new vector.
    #[must_use]
    pub fn to_vec(&self) -> Vec<u8> {
        self.0.to_vec()
    }
}

impl Deref for Slice {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
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
