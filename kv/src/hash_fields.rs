//! Hash field values and the field-expiry header of hash metas (HEXPIRE & co.).
//!
//! Two member value formats, chosen per hash by its meta's `inline` bytes (FORMAT.md):
//! - **v1** (`inline` empty): the member value is the field value, raw. No field has a TTL.
//! - **v2** (`inline` = `2 | ttl_fields u64 | min_expire_ms u64`): every member value starts
//!   with a flag byte, `0` = no expiry, `1` = an expiry (u64 BE Unix ms) follows; then the
//!   field value. A hash is converted from v1 to v2 (all members rewritten) the first time
//!   one of its fields gets a TTL; it never goes back.
//!
//! Invariants of the v2 header: `ttl_fields` is the exact number of member records carrying
//! an expiry; `min_expire_ms` is a lower bound of their earliest expiry (0 when none). So
//! while `now < min_expire_ms` no field has expired and the meta `size` is the exact live
//! field count (HLEN stays O(1)); otherwise readers filter expired fields and writers (and
//! the sweeper) first purge them, recomputing both header fields exactly.

use crate::error::{KvError, KvResult};
use crate::format::Meta;
use bytes::Bytes;

/// The `inline` version byte of a hash whose member values carry a flag byte.
pub const HASH_FIELDS_V2: u8 = 2;
const HEADER_LEN: usize = 1 + 8 + 8;
const FLAG_PLAIN: u8 = 0;
const FLAG_EXPIRES: u8 = 1;

/// The field-expiry header of a v2 hash.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TtlHeader {
    /// Member records that carry an expiry.
    pub ttl_fields: u64,
    /// Lower bound of the earliest field expiry (Unix ms); 0 = none.
    pub min_expire_ms: u64,
}

impl TtlHeader {
    /// True if some field may have expired at `now_ms` (readers must filter, writers purge).
    #[must_use]
    pub fn may_have_expired(&self, now_ms: u64) -> bool {
        self.ttl_fields > 0 && self.min_expire_ms <= now_ms
    }

    /// Records that a field got expiry `at`.
    pub fn add(&mut self, at: u64) {
        self.ttl_fields += 1;
        self.min_expire_ms = if self.min_expire_ms == 0 {
            at
        } else {
            self.min_expire_ms.min(at)
        };
    }

    /// Records that a field lost its expiry (persisted, overwritten or deleted).
    pub fn remove(&mut self) {
        self.ttl_fields = self.ttl_fields.saturating_sub(1);
        if self.ttl_fields == 0 {
            self.min_expire_ms = 0;
        }
    }
}

/// The header of a hash meta: `None` for a v1 hash.
pub fn header(meta: &Meta) -> KvResult<Option<TtlHeader>> {
    match meta.inline.split_first() {
        None => Ok(None),
        Some((&HASH_FIELDS_V2, rest)) if rest.len() == HEADER_LEN - 1 => {
            let (ttl, min) = rest.split_at(8);
            Ok(Some(TtlHeader {
                ttl_fields: u64::from_be_bytes(<[u8; 8]>::try_from(ttl).map_err(|_| corrupt())?),
                min_expire_ms: u64::from_be_bytes(<[u8; 8]>::try_from(min).map_err(|_| corrupt())?),
            }))
        }
        Some(_) => Err(corrupt()),
    }
}

/// Stores `h` as the header of `meta` (making it a v2 hash).
pub fn set_header(meta: &mut Meta, h: TtlHeader) {
    let mut inline = Vec::with_capacity(HEADER_LEN);
    inline.push(HASH_FIELDS_V2);
    inline.extend_from_slice(&h.ttl_fields.to_be_bytes());
    inline.extend_from_slice(&h.min_expire_ms.to_be_bytes());
    meta.inline = inline;
}

fn corrupt() -> KvError {
    KvError::Corrupt("bad hash field-expiry header".into())
}

/// A decoded field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldValue {
    /// Expiry (Unix ms); 0 = none.
    pub expire_at_ms: u64,
    /// The field's value.
    pub value: Bytes,
}

impl FieldValue {
    /// True if the field has expired at `now_ms`.
    #[must_use]
    pub fn is_expired(&self, now_ms: u64) -> bool {
        self.expire_at_ms != 0 && self.expire_at_ms <= now_ms
    }
}

/// Decodes a stored member value of a hash (v2 when `v2`).
pub fn decode_value(v2: bool, raw: &[u8]) -> KvResult<FieldValue> {
    if !v2 {
        return Ok(FieldValue {
            expire_at_ms: 0,
            value: Bytes::copy_from_slice(raw),
        });
    }
    let bad = || KvError::Corrupt("bad hash field value".into());
    match raw.split_first() {
        Some((&FLAG_PLAIN, value)) => Ok(FieldValue {
            expire_at_ms: 0,
            value: Bytes::copy_from_slice(value),
        }),
        Some((&FLAG_EXPIRES, rest)) => {
            let (at, value) = rest.split_at_checked(8).ok_or_else(bad)?;
            Ok(FieldValue {
                expire_at_ms: u64::from_be_bytes(<[u8; 8]>::try_from(at).map_err(|_| bad())?),
                value: Bytes::copy_from_slice(value),
            })
        }
        _ => Err(bad()),
    }
}

/// Encodes a member value (`expire_at_ms` must be 0 for a v1 hash).
#[must_use]
pub fn encode_value(v2: bool, expire_at_ms: u64, value: &[u8]) -> Vec<u8> {
    if !v2 {
        return value.to_vec();
    }
    let mut out = Vec::with_capacity(1 + 8 + value.len());
    if expire_at_ms == 0 {
        out.push(FLAG_PLAIN);
    } else {
        out.push(FLAG_EXPIRES);
        out.extend_from_slice(&expire_at_ms.to_be_bytes());
    }
    out.extend_from_slice(value);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::KeyType;

    #[test]
    fn values_and_header_round_trip() {
        for (v2, at) in [(false, 0), (true, 0), (true, 1234)] {
            let raw = encode_value(v2, at, b"val");
            let decoded = decode_value(v2, &raw).unwrap();
            assert_eq!(decoded.value, Bytes::from_static(b"val"));
            assert_eq!(decoded.expire_at_ms, at);
        }
        assert!(decode_value(true, &[7, 1]).is_err());
        assert!(decode_value(true, &[1, 0, 0]).is_err());
        let mut meta = Meta {
            key_type: KeyType::Hash,
            expire_at_ms: 0,
            incarnation: 1,
            size: 2,
            inline: Vec::new(),
        };
        assert_eq!(header(&meta).unwrap(), None);
        let mut h = TtlHeader::default();
        h.add(50);
        h.add(20);
        set_header(&mut meta, h);
        assert_eq!(
            header(&Meta::decode(&meta.encode()).unwrap()).unwrap(),
            Some(h)
        );
        assert!(h.may_have_expired(20) && !h.may_have_expired(19));
        meta.inline = vec![3];
        assert!(header(&meta).is_err());
    }
}
