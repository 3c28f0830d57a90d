//! Byte layouts of the kv keyspaces (written down in `kv/FORMAT.md`; keep the two in step).
//!
//! - `kv_meta`: key = `db(u8) | user key`; value = [`Meta`] (version byte first).
//! - `kv_data`: key = `db(u8) | key_len(u32 BE) | user key | incarnation(u64 BE) | member`.
//!
//! Invariants: every meta value starts with [`META_FORMAT_V1`]; a decoder rejects anything
//! else with [`KvError::Corrupt`] instead of guessing. Members of a collection are only
//! reachable through the meta record whose `incarnation` matches their key.

use crate::error::{KvError, KvResult};
use orcinus_storage::Slice;

/// Format version byte of meta values written by this code.
pub const META_FORMAT_V1: u8 = 1;
/// Bytes of the fixed meta header: version, type, expire_at, incarnation, size.
const META_HEADER_LEN: usize = 1 + 1 + 8 + 8 + 8;

/// The Redis type of a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyType {
    /// A string; the value is inline in the meta record.
    String,
    /// A hash; fields live in `kv_data`.
    Hash,
    /// A list; `inline` holds the head and tail indexes, elements live in `kv_data`.
    List,
    /// A set; members live in `kv_data` (empty values).
    Set,
    /// A sorted set; members → score in `kv_data`, plus the `kv_score` index.
    Zset,
}

impl KeyType {
    fn to_byte(self) -> u8 {
        match self {
            Self::String => 1,
            Self::Hash => 2,
            Self::List => 3,
            Self::Set => 4,
            Self::Zset => 5,
        }
    }

    fn from_byte(b: u8) -> KvResult<Self> {
        match b {
            1 => Ok(Self::String),
            2 => Ok(Self::Hash),
            3 => Ok(Self::List),
            4 => Ok(Self::Set),
            5 => Ok(Self::Zset),
            other => Err(KvError::Corrupt(format!("unknown key type {other}"))),
        }
    }

    /// The name `TYPE` answers.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Hash => "hash",
            Self::List => "list",
            Self::Set => "set",
            Self::Zset => "zset",
        }
    }
}

/// The metadata record of one user key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    /// The key's type.
    pub key_type: KeyType,
    /// Expiry as Unix ms; 0 = no expiry.
    pub expire_at_ms: u64,
    /// Incarnation id; members of collections are stored under it. Fresh on every creation.
    pub incarnation: u64,
    /// Strings: value length; collections: member count.
    pub size: u64,
    /// Strings: the value; lists: head and tail indexes; hashes: the field-expiry header
    /// (see FORMAT.md).
    pub inline: Vec<u8>,
}

impl Meta {
    /// A new, empty collection meta of `key_type` under a fresh `incarnation`.
    #[must_use]
    pub fn collection(key_type: KeyType, incarnation: u64) -> Self {
        Self {
            key_type,
            expire_at_ms: 0,
            incarnation,
            size: 0,
            inline: Vec::new(),
        }
    }

    /// A new string meta.
    #[must_use]
    pub fn string(value: Vec<u8>, expire_at_ms: u64) -> Self {
        Self {
            key_type: KeyType::String,
            expire_at_ms,
            incarnation: 0,
            size: value.len() as u64,
            inline: value,
        }
    }

    /// True if the key has expired at `now_ms`.
    #[must_use]
    pub fn is_expired(&self, now_ms: u64) -> bool {
        self.expire_at_ms != 0 && self.expire_at_ms <= now_ms
    }

    /// Encodes to the stored value.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        [&self.header()[..], &self.inline].concat()
    }

    /// Encodes to the stored value, built directly in the engine's buffer.
    #[must_use]
    pub fn to_stored(&self) -> Slice {
        Slice::concat(&[&self.header(), &self.inline])
    }

    /// The stored value of a string meta holding `value` — what
    /// `Meta::string(value.to_vec(), expire_at_ms)` with `incarnation` encodes to — without
    /// copying the value anywhere but into the engine's buffer.
    #[must_use]
    pub fn stored_string(value: &[u8], expire_at_ms: u64, incarnation: u64) -> Slice {
        let header = Self {
            key_type: KeyType::String,
            expire_at_ms,
            incarnation,
            size: value.len() as u64,
            inline: Vec::new(),
        }
        .header();
        Slice::concat(&[&header, value])
    }

    fn header(&self) -> [u8; META_HEADER_LEN] {
        let [e0, e1, e2, e3, e4, e5, e6, e7] = self.expire_at_ms.to_be_bytes();
        let [i0, i1, i2, i3, i4, i5, i6, i7] = self.incarnation.to_be_bytes();
        let [s0, s1, s2, s3, s4, s5, s6, s7] = self.size.to_be_bytes();
        [
            META_FORMAT_V1,
            self.key_type.to_byte(),
            e0,
            e1,
            e2,
            e3,
            e4,
            e5,
            e6,
            e7,
            i0,
            i1,
            i2,
            i3,
            i4,
            i5,
            i6,
            i7,
            s0,
            s1,
            s2,
            s3,
            s4,
            s5,
            s6,
            s7,
        ]
    }

    /// True if an encoded record ([`Meta::to_stored`]) may need the expiry sweep: it has a key
    /// expiry, or it is a hash with a field-expiry header (FORMAT.md). Reads the header only.
    #[must_use]
    pub fn stored_needs_expiry_sweep(raw: &[u8]) -> bool {
        let expiry = raw.get(2..10).is_some_and(|b| b.iter().any(|&x| x != 0));
        let hash_with_header =
            raw.get(1) == Some(&KeyType::Hash.to_byte()) && raw.len() > META_HEADER_LEN;
        expiry || hash_with_header
    }

    /// Decodes a stored value.
    pub fn decode(raw: &[u8]) -> KvResult<Self> {
        let mut meta = Self::decode_header(raw)?;
        meta.inline = raw.get(META_HEADER_LEN..).unwrap_or_default().to_vec();
        Ok(meta)
    }

    /// Where the inline bytes (a string's value) start in a stored record.
    pub const INLINE_OFFSET: usize = META_HEADER_LEN;

    /// Decodes a stored value's header only: `inline` is left empty (the caller takes the
    /// bytes from `raw[INLINE_OFFSET..]` itself, without a copy).
    pub fn decode_header(raw: &[u8]) -> KvResult<Self> {
        let header = raw
            .get(..META_HEADER_LEN)
            .ok_or_else(|| KvError::Corrupt(format!("meta record of {} bytes", raw.len())))?;
        let (version, rest) = header
            .split_first()
            .ok_or_else(|| KvError::Corrupt("empty meta".into()))?;
        if *version != META_FORMAT_V1 {
            return Err(KvError::Corrupt(format!("meta format version {version}")));
        }
        let (type_byte, rest) = rest
            .split_first()
            .ok_or_else(|| KvError::Corrupt("short meta".into()))?;
        let expire_at_ms = read_u64(rest, 0)?;
        let incarnation = read_u64(rest, 8)?;
        let size = read_u64(rest, 16)?;
        Ok(Self {
            key_type: KeyType::from_byte(*type_byte)?,
            expire_at_ms,
            incarnation,
            size,
            inline: Vec::new(),
        })
    }
}

fn read_u64(bytes: &[u8], at: usize) -> KvResult<u64> {
    bytes
        .get(at..at + 8)
        .and_then(|b| <[u8; 8]>::try_from(b).ok())
        .map(u64::from_be_bytes)
        .ok_or_else(|| KvError::Corrupt("short meta".into()))
}

/// `kv_meta` key of (`db`, `key`).
#[must_use]
pub fn meta_key(db: u8, key: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(1 + key.len());
    out.push(db);
    out.extend_from_slice(key);
    out
}

/// Runs `f` on the `kv_meta` key of (`db`, `key`), built on the stack when it is short (a
/// point read needs no allocation for it).
pub fn with_meta_key<R>(db: u8, key: &[u8], f: impl FnOnce(&[u8]) -> R) -> R {
    let mut stack = [0u8; 64];
    match stack.get_mut(..=key.len()) {
        Some(buf) => {
            let (first, rest) = buf.split_at_mut(1);
            first.fill(db);
            rest.copy_from_slice(key);
            f(buf)
        }
        None => f(&meta_key(db, key)),
    }
}

/// The user key of a `kv_meta` key (drops the db byte).
#[must_use]
pub fn user_key_of_meta(meta_key: &[u8]) -> &[u8] {
    meta_key.get(1..).unwrap_or_default()
}

/// `kv_data` prefix of all members of one incarnation of (`db`, `key`).
#[must_use]
pub fn data_prefix(db: u8, key: &[u8], incarnation: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(1 + 4 + key.len() + 8);
    out.push(db);
    // Keys are bounded by proto-max-bulk-len (< 4 GiB), so the length fits in u32.
    out.extend_from_slice(&u32::try_from(key.len()).unwrap_or(u32::MAX).to_be_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(&incarnation.to_be_bytes());
    out
}

/// `kv_data` key of one member.
#[must_use]
pub fn data_key(db: u8, key: &[u8], incarnation: u64, member: &[u8]) -> Vec<u8> {
    let mut out = data_prefix(db, key, incarnation);
    out.extend_from_slice(member);
    out
}

/// A decoded `kv_data` key.
#[derive(Debug, PartialEq, Eq)]
pub struct DataKey<'a> {
    /// Database index.
    pub db: u8,
    /// User key.
    pub key: &'a [u8],
    /// Incarnation the member belongs to.
    pub incarnation: u64,
    /// Member (hash field, …).
    pub member: &'a [u8],
}

/// Decodes a `kv_data` key.
pub fn decode_data_key(raw: &[u8]) -> KvResult<DataKey<'_>> {
    let corrupt = || KvError::Corrupt("short data key".into());
    let (&db, rest) = raw.split_first().ok_or_else(corrupt)?;
    let (len_bytes, rest) = rest.split_at_checked(4).ok_or_else(corrupt)?;
    let len = u32::from_be_bytes(<[u8; 4]>::try_from(len_bytes).map_err(|_| corrupt())?);
    let (key, rest) = rest.split_at_checked(len as usize).ok_or_else(corrupt)?;
    let (inc, member) = rest.split_at_checked(8).ok_or_else(corrupt)?;
    let incarnation = u64::from_be_bytes(<[u8; 8]>::try_from(inc).map_err(|_| corrupt())?);
    Ok(DataKey {
        db,
        key,
        incarnation,
        member,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stack_meta_key_equals_meta_key() {
        for len in [0, 1, 62, 63, 64, 65, 300] {
            let key = vec![b'k'; len];
            assert_eq!(
                with_meta_key(7, &key, <[u8]>::to_vec),
                meta_key(7, &key),
                "{len}"
            );
        }
    }

    #[test]
    fn meta_round_trips() {
        let meta = Meta {
            key_type: KeyType::Hash,
            expire_at_ms: 42,
            incarnation: 7,
            size: 3,
            inline: vec![],
        };
        assert_eq!(Meta::decode(&meta.encode()).unwrap(), meta);
        let s = Meta::string(b"hello".to_vec(), 0);
        assert_eq!(Meta::decode(&s.encode()).unwrap(), s);
        assert_eq!(&*meta.to_stored(), meta.encode().as_slice());
    }

    #[test]
    fn stored_string_encodes_like_a_string_meta() {
        let value = vec![3u8; 20_000];
        let mut meta = Meta::string(value.clone(), 1234);
        meta.incarnation = 77;
        assert_eq!(
            &*Meta::stored_string(&value, 1234, 77),
            meta.encode().as_slice()
        );
    }

    #[test]
    fn meta_rejects_unknown_version_and_short_records() {
        let mut raw = Meta::string(b"x".to_vec(), 0).encode();
        raw[0] = 9;
        assert!(matches!(Meta::decode(&raw), Err(KvError::Corrupt(_))));
        assert!(matches!(Meta::decode(&[1, 1, 0]), Err(KvError::Corrupt(_))));
    }

    #[test]
    fn data_key_round_trips_and_prefix_is_a_prefix() {
        let raw = data_key(3, b"k\x00y", 99, b"field");
        assert!(raw.starts_with(&data_prefix(3, b"k\x00y", 99)));
        let decoded = decode_data_key(&raw).unwrap();
        assert_eq!(
            decoded,
            DataKey {
                db: 3,
                key: b"k\x00y",
                incarnation: 99,
                member: b"field"
            }
        );
        assert!(decode_data_key(&raw[..6]).is_err());
    }
}
