//! The DUMP / RESTORE payload (kv/FORMAT.md, "DUMP / RESTORE payload"): one value in Redis's
//! DUMP format, `RDB object type | RDB object | RDB version u16 LE | CRC-64 u64 LE`, the CRC
//! covering every byte before it. [`encode`] writes the plain RDB encodings (string 0, list
//! 1, set 2, hash 4, zset 5; a hash with field TTLs: 24, Redis 7.4's `HASH_METADATA`) so
//! real Redis can restore them; [`decode`] also reads what real Redis writes for small
//! collections: Redis 7.x (intset 11, listpacks 16, 17, 20, quicklist 18, hash listpack with
//! TTLs 25) and Redis ≤ 6.2 (ziplists 10, 12, 13, ziplist quicklist 14).
//!
//! Invariants: [`decode`] checks the trailer first (RDB version ≤ [`RDB_VERSION_MAX`], CRC)
//! and then requires the object to use every byte before it; it returns a value only if the
//! whole payload is valid: no empty collection, no duplicate set member / hash field / zset
//! member, no NaN score. Untrusted input never panics and never drives an allocation larger
//! than the payload (see `rdb_codec`).

mod listpack;
mod objects;
pub mod rdb_codec;
mod ziplist;

use bytes::Bytes;
use rdb_codec::{crc64, put_length, put_string};

/// RDB version written in the trailer: 10 (Redis 7.0), the oldest version that knows every
/// object type DUMP writes, so Redis 7.0, 7.2 and 7.4 all accept our payloads.
pub const RDB_VERSION: u16 = 10;
/// RDB version written for a hash with field TTLs (Redis 7.4, the first with field expiry).
pub const RDB_VERSION_FIELD_TTL: u16 = 12;
/// Highest RDB version RESTORE accepts (Redis 7.4).
pub const RDB_VERSION_MAX: u16 = 12;
/// Bytes of the trailer: the RDB version and the CRC-64.
pub const TRAILER_LEN: usize = 2 + 8;

/// RDB object types (Redis `rdb.h`).
pub mod rdb_type {
    /// A string.
    pub const STRING: u8 = 0;
    /// A list as a plain sequence of strings.
    pub const LIST: u8 = 1;
    /// A set as a plain sequence of strings.
    pub const SET: u8 = 2;
    /// A sorted set with scores as text (before RDB 8).
    pub const ZSET: u8 = 3;
    /// A hash as field, value pairs.
    pub const HASH: u8 = 4;
    /// A sorted set with binary (f64 LE) scores.
    pub const ZSET_2: u8 = 5;
    /// A list as one ziplist (Redis < 3.2).
    pub const LIST_ZIPLIST: u8 = 10;
    /// A set of integers (intset blob).
    pub const SET_INTSET: u8 = 11;
    /// A sorted set as one ziplist of member, score pairs (Redis ≤ 6.2).
    pub const ZSET_ZIPLIST: u8 = 12;
    /// A hash as one ziplist of field, value pairs (Redis ≤ 6.2).
    pub const HASH_ZIPLIST: u8 = 13;
    /// A list as quicklist nodes, each a ziplist (Redis 3.2 – 6.2).
    pub const LIST_QUICKLIST: u8 = 14;
    /// A hash as one listpack of field, value pairs.
    pub const HASH_LISTPACK: u8 = 16;
    /// A sorted set as one listpack of member, score pairs.
    pub const ZSET_LISTPACK: u8 = 17;
    /// A list as quicklist nodes (listpacks or plain elements).
    pub const LIST_QUICKLIST_2: u8 = 18;
    /// A set as one listpack of members.
    pub const SET_LISTPACK: u8 = 20;
    /// A hash with field TTLs (relative to a minimum expiry).
    pub const HASH_METADATA: u8 = 24;
    /// A hash with field TTLs as one listpack of field, value, expiry triples.
    pub const HASH_LISTPACK_EX: u8 = 25;
}

/// Largest hash-field expiry Redis accepts (Unix ms, 2^48 - 1).
pub const MAX_FIELD_EXPIRE_MS: u64 = (1 << 48) - 1;

/// One hash field of a dumped hash.
#[derive(Debug, Clone, PartialEq)]
pub struct HashField {
    /// Field name.
    pub field: Bytes,
    /// Field value.
    pub value: Bytes,
    /// The field's expiry (Unix ms); 0 = none.
    pub expire_at_ms: u64,
}

/// A dumped value.
#[derive(Debug, Clone, PartialEq)]
pub enum DumpValue {
    /// A string.
    String(Bytes),
    /// A list, head first.
    List(Vec<Bytes>),
    /// A set.
    Set(Vec<Bytes>),
    /// A hash.
    Hash(Vec<HashField>),
    /// A sorted set: (member, score), scores never NaN.
    Zset(Vec<(Bytes, f64)>),
}

/// Why a payload cannot be restored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DumpError {
    /// Shorter than the trailer, an RDB version above [`RDB_VERSION_MAX`], or a CRC mismatch.
    VersionOrChecksum,
    /// The object is malformed, empty, or of a type Orcinus does not restore.
    BadFormat,
}

/// Serializes `value` as a DUMP payload.
#[must_use]
pub fn encode(value: &DumpValue) -> Vec<u8> {
    let mut out = Vec::new();
    let mut version = RDB_VERSION;
    match value {
        DumpValue::String(s) => {
            out.push(rdb_type::STRING);
            put_string(&mut out, s);
        }
        DumpValue::List(items) | DumpValue::Set(items) => {
            let is_list = matches!(value, DumpValue::List(_));
            out.push(if is_list {
                rdb_type::LIST
            } else {
                rdb_type::SET
            });
            put_length(&mut out, items.len() as u64);
            for item in items {
                put_string(&mut out, item);
            }
        }
        DumpValue::Hash(fields) => {
            let min_expire = fields
                .iter()
                .map(|f| f.expire_at_ms)
                .filter(|&at| at != 0)
                .min();
            match min_expire {
                None => out.push(rdb_type::HASH),
                Some(min) => {
                    out.push(rdb_type::HASH_METADATA);
                    out.extend_from_slice(&min.to_le_bytes());
                    version = RDB_VERSION_FIELD_TTL;
                }
            }
            put_length(&mut out, fields.len() as u64);
            for f in fields {
                if let Some(min) = min_expire {
                    // 0 = no TTL, otherwise the expiry relative to the minimum, plus one.
                    let ttl = match f.expire_at_ms {
                        0 => 0,
                        at => at - min + 1,
                    };
                    put_length(&mut out, ttl);
                }
                put_string(&mut out, &f.field);
                put_string(&mut out, &f.value);
            }
        }
        DumpValue::Zset(entries) => {
            out.push(rdb_type::ZSET_2);
            put_length(&mut out, entries.len() as u64);
            for (member, score) in entries {
                put_string(&mut out, member);
                out.extend_from_slice(&score.to_le_bytes());
            }
        }
    }
    out.extend_from_slice(&version.to_le_bytes());
    let crc = crc64(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Checks the trailer of `payload` and decodes its object.
pub fn decode(payload: &[u8]) -> Result<DumpValue, DumpError> {
    let body_len = payload
        .len()
        .checked_sub(TRAILER_LEN)
        .ok_or(DumpError::VersionOrChecksum)?;
    let (covered, crc) = payload
        .split_at_checked(body_len + 2)
        .ok_or(DumpError::VersionOrChecksum)?;
    let (body, version) = covered
        .split_at_checked(body_len)
        .ok_or(DumpError::VersionOrChecksum)?;
    let version = <[u8; 2]>::try_from(version).map_err(|_| DumpError::VersionOrChecksum)?;
    let crc = <[u8; 8]>::try_from(crc).map_err(|_| DumpError::VersionOrChecksum)?;
    if u16::from_le_bytes(version) > RDB_VERSION_MAX || crc64(covered) != u64::from_le_bytes(crc) {
        return Err(DumpError::VersionOrChecksum);
    }
    objects::decode_object(body).map_err(|_| DumpError::BadFormat)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &str) -> Bytes {
        Bytes::copy_from_slice(s.as_bytes())
    }

    #[test]
    fn every_type_round_trips() {
        let values = [
            DumpValue::String(b("hello")),
            DumpValue::String(Bytes::new()),
            DumpValue::List(vec![b("a"), b(""), b("a")]),
            DumpValue::Set(vec![b("x"), b("y")]),
            DumpValue::Hash(vec![HashField {
                field: b("f"),
                value: b("v"),
                expire_at_ms: 0,
            }]),
            DumpValue::Hash(vec![
                HashField {
                    field: b("f"),
                    value: b("v"),
                    expire_at_ms: 5_000,
                },
                HashField {
                    field: b("g"),
                    value: b("w"),
                    expire_at_ms: 0,
                },
                HashField {
                    field: b("h"),
                    value: b("x"),
                    expire_at_ms: 4_000,
                },
            ]),
            DumpValue::Zset(vec![(b("m"), 1.5), (b("n"), f64::NEG_INFINITY)]),
        ];
        for value in values {
            let payload = encode(&value);
            assert_eq!(decode(&payload).unwrap(), value);
        }
    }

    #[test]
    fn trailer_is_checked_before_the_object() {
        let payload = encode(&DumpValue::String(b("v")));
        let n = payload.len();
        // Real Redis 7.0: "\x00\x01v" + version 10 + CRC.
        assert_eq!(payload[..5], [0, 1, b'v', 10, 0]);
        let mut bad_crc = payload.clone();
        bad_crc[n - 1] ^= 1;
        assert_eq!(decode(&bad_crc), Err(DumpError::VersionOrChecksum));
        let mut newer = payload[..n - 8].to_vec();
        newer[n - 10] = 13;
        let crc = crc64(&newer);
        newer.extend_from_slice(&crc.to_le_bytes());
        assert_eq!(decode(&newer), Err(DumpError::VersionOrChecksum));
        assert_eq!(decode(&payload[..9]), Err(DumpError::VersionOrChecksum));
        let mut trailing = payload[..n - 10].to_vec();
        trailing.push(0);
        trailing.extend_from_slice(&RDB_VERSION.to_le_bytes());
        let crc = crc64(&trailing);
        trailing.extend_from_slice(&crc.to_le_bytes());
        assert_eq!(decode(&trailing), Err(DumpError::BadFormat));
    }
}
