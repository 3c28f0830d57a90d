//! A hasher for keys that carry their own precomputed hash: the lock table and the point
//! cache hash a key once (when it enters a transaction or a lookup) and pass that hash
//! through unchanged inside their maps.

use std::hash::{BuildHasher, Hasher};

/// Builds [`CarriedHasher`]s: use it for maps whose key types hash as one `write_u64` of
/// the hash they carry.
#[derive(Clone, Copy, Default)]
pub(crate) struct CarriedHash;

/// Returns the one `u64` written to it.
#[derive(Default)]
pub(crate) struct CarriedHasher(u64);

impl Hasher for CarriedHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is used by the key types; stay a hash if anything else writes.
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

impl BuildHasher for CarriedHash {
    type Hasher = CarriedHasher;
    fn build_hasher(&self) -> CarriedHasher {
        CarriedHasher::default()
    }
}
