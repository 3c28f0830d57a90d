//! Decoding of one RDB object (type byte and body) into a [`DumpValue`], for every RDB type
//! Orcinus restores (the table in kv/FORMAT.md). Types it does not restore (modules,
//! streams, Redis 2.4's zipmap, the pre-release field-expiry types 22 and 23) are
//! `BadFormat`, as is anything malformed.
//!
//! Invariants: the object must use every byte of the body; a collection must not be empty
//! and must not repeat a set member, hash field or zset member; a score must not be NaN; a
//! field expiry must be ≤ 2^48 - 1 ms. Every count is checked against the bytes left
//! (`Reader::count`) before a loop runs on it.

use super::listpack::{intset_members, listpack_entries};
use super::rdb_codec::{BadFormat, DecodeResult, Reader};
use super::ziplist::ziplist_entries;
use super::{DumpValue, HashField, MAX_FIELD_EXPIRE_MS, rdb_type as t};
use crate::score::parse_float_opt;
use bytes::Bytes;
use std::collections::HashSet;

/// Decodes the object `body` (type byte first) in full.
pub fn decode_object(body: &[u8]) -> DecodeResult<DumpValue> {
    let mut r = Reader::new(body);
    let value = match r.byte()? {
        t::STRING => DumpValue::String(Bytes::from(r.string()?)),
        t::LIST => DumpValue::List(strings(&mut r)?),
        t::SET => DumpValue::Set(strings(&mut r)?),
        t::ZSET => DumpValue::Zset(zset_with_text_scores(&mut r)?),
        t::HASH => DumpValue::Hash(hash_pairs(&mut r)?),
        t::ZSET_2 => DumpValue::Zset(zset_with_binary_scores(&mut r)?),
        t::LIST_ZIPLIST => DumpValue::List(to_bytes(ziplist_entries(&r.string()?)?)),
        t::SET_INTSET => DumpValue::Set(to_bytes(intset_members(&r.string()?)?)),
        t::ZSET_ZIPLIST => DumpValue::Zset(zset_pairs(ziplist_entries(&r.string()?)?)?),
        t::HASH_ZIPLIST => DumpValue::Hash(hash_triples(ziplist_entries(&r.string()?)?, false)?),
        t::LIST_QUICKLIST => DumpValue::List(quicklist(&mut r, false)?),
        t::HASH_LISTPACK => DumpValue::Hash(hash_from_listpack(&r.string()?, false)?),
        t::ZSET_LISTPACK => DumpValue::Zset(zset_pairs(listpack_entries(&r.string()?)?)?),
        t::LIST_QUICKLIST_2 => DumpValue::List(quicklist(&mut r, true)?),
        t::SET_LISTPACK => DumpValue::Set(to_bytes(listpack_entries(&r.string()?)?)),
        t::HASH_METADATA => DumpValue::Hash(hash_with_metadata(&mut r)?),
        t::HASH_LISTPACK_EX => {
            // The minimum field expiry comes first; the listpack carries absolute expiries.
            r.u64_le()?;
            DumpValue::Hash(hash_from_listpack(&r.string()?, true)?)
        }
        _ => return Err(BadFormat),
    };
    if r.remaining() != 0 {
        return Err(BadFormat);
    }
    check(&value)?;
    Ok(value)
}

/// Rejects empty collections, repeated members and (defensively) NaN scores.
fn check(value: &DumpValue) -> DecodeResult<()> {
    fn unique<'a>(names: impl ExactSizeIterator<Item = &'a Bytes>) -> DecodeResult<()> {
        let n = names.len();
        let distinct: HashSet<&Bytes> = names.collect();
        if n == 0 || distinct.len() != n {
            return Err(BadFormat);
        }
        Ok(())
    }
    match value {
        DumpValue::String(_) => Ok(()),
        DumpValue::List(items) if items.is_empty() => Err(BadFormat),
        DumpValue::List(_) => Ok(()),
        DumpValue::Set(items) => unique(items.iter()),
        DumpValue::Hash(fields) => unique(fields.iter().map(|f| &f.field)),
        DumpValue::Zset(entries) if entries.iter().any(|(_, s)| s.is_nan()) => Err(BadFormat),
        DumpValue::Zset(entries) => unique(entries.iter().map(|(m, _)| m)),
    }
}

fn to_bytes(items: Vec<Vec<u8>>) -> Vec<Bytes> {
    items.into_iter().map(Bytes::from).collect()
}

fn strings(r: &mut Reader<'_>) -> DecodeResult<Vec<Bytes>> {
    let n = r.count(1)?;
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(Bytes::from(r.string()?));
    }
    Ok(out)
}

fn hash_pairs(r: &mut Reader<'_>) -> DecodeResult<Vec<HashField>> {
    let n = r.count(2)?;
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(HashField {
            field: Bytes::from(r.string()?),
            value: Bytes::from(r.string()?),
            expire_at_ms: 0,
        });
    }
    Ok(out)
}

/// Type 24: `min_expire u64 LE | count | (ttl length, field, value)*`, ttl 0 = none,
/// otherwise the expiry is `min_expire + ttl - 1`.
fn hash_with_metadata(r: &mut Reader<'_>) -> DecodeResult<Vec<HashField>> {
    let min_expire = r.u64_le()?;
    let n = r.count(3)?;
    let mut out = Vec::new();
    for _ in 0..n {
        let ttl = r.length()?;
        let expire_at_ms = match ttl {
            0 => 0,
            ttl => min_expire
                .checked_add(ttl - 1)
                .filter(|at| *at <= MAX_FIELD_EXPIRE_MS)
                .ok_or(BadFormat)?,
        };
        out.push(HashField {
            field: Bytes::from(r.string()?),
            value: Bytes::from(r.string()?),
            expire_at_ms,
        });
    }
    Ok(out)
}

/// Types 16 (field, value pairs) and 25 (field, value, absolute expiry triples; 0 = none).
fn hash_from_listpack(blob: &[u8], with_ttl: bool) -> DecodeResult<Vec<HashField>> {
    hash_triples(listpack_entries(blob)?, with_ttl)
}

/// Field, value pairs (or field, value, expiry triples) of a listpack or ziplist.
fn hash_triples(entries: Vec<Vec<u8>>, with_ttl: bool) -> DecodeResult<Vec<HashField>> {
    let width = if with_ttl { 3 } else { 2 };
    if !entries.len().is_multiple_of(width) {
        return Err(BadFormat);
    }
    let mut out = Vec::new();
    let mut it = entries.into_iter();
    while let (Some(field), Some(value)) = (it.next(), it.next()) {
        let expire_at_ms = if with_ttl {
            let raw = it.next().ok_or(BadFormat)?;
            std::str::from_utf8(&raw)
                .ok()
                .and_then(|s| s.parse::<u64>().ok())
                .filter(|at| *at <= MAX_FIELD_EXPIRE_MS)
                .ok_or(BadFormat)?
        } else {
            0
        };
        out.push(HashField {
            field: Bytes::from(field),
            value: Bytes::from(value),
            expire_at_ms,
        });
    }
    Ok(out)
}

fn score_text(raw: &[u8]) -> DecodeResult<f64> {
    parse_float_opt(raw).ok_or(BadFormat)
}

/// Types 17 and 12: member, score pairs of a listpack or ziplist; a score is an integer
/// entry or a float's text.
fn zset_pairs(entries: Vec<Vec<u8>>) -> DecodeResult<Vec<(Bytes, f64)>> {
    if !entries.len().is_multiple_of(2) {
        return Err(BadFormat);
    }
    let mut out = Vec::new();
    let mut it = entries.into_iter();
    while let (Some(member), Some(score)) = (it.next(), it.next()) {
        out.push((Bytes::from(member), score_text(&score)?));
    }
    Ok(out)
}

/// Type 5: member string, then the score as f64 LE.
fn zset_with_binary_scores(r: &mut Reader<'_>) -> DecodeResult<Vec<(Bytes, f64)>> {
    let n = r.count(9)?;
    let mut out = Vec::new();
    for _ in 0..n {
        let member = Bytes::from(r.string()?);
        let score = f64::from_le_bytes(r.array()?);
        out.push((member, score));
    }
    Ok(out)
}

/// Type 3: member string, then the score as Redis's `rdbSaveDoubleValue` text (a length
/// byte, with 253 = NaN, 254 = +inf, 255 = -inf).
fn zset_with_text_scores(r: &mut Reader<'_>) -> DecodeResult<Vec<(Bytes, f64)>> {
    let n = r.count(2)?;
    let mut out = Vec::new();
    for _ in 0..n {
        let member = Bytes::from(r.string()?);
        let score = match r.byte()? {
            253 => return Err(BadFormat),
            254 => f64::INFINITY,
            255 => f64::NEG_INFINITY,
            len => score_text(r.take(usize::from(len))?)?,
        };
        out.push((member, score));
    }
    Ok(out)
}

const QUICKLIST_NODE_PLAIN: u64 = 1;
const QUICKLIST_NODE_PACKED: u64 = 2;
/// Not a container value of the format: marks the ziplist nodes of type 14.
const QUICKLIST_NODE_ZIPLIST: u64 = u64::MAX;

/// Type 18: `node count | (container, blob)*`; a plain node is one element, a packed node a
/// listpack of elements. Type 14 (Redis ≤ 6.2): `node count | blob*`, every blob a ziplist.
/// A node without entries is skipped, a zero-length blob is malformed, as in Redis.
fn quicklist(r: &mut Reader<'_>, version_2: bool) -> DecodeResult<Vec<Bytes>> {
    let nodes = r.count(if version_2 { 2 } else { 1 })?;
    let mut out = Vec::new();
    for _ in 0..nodes {
        let container = if version_2 {
            r.length()?
        } else {
            QUICKLIST_NODE_ZIPLIST
        };
        let blob = r.string()?;
        if blob.is_empty() {
            return Err(BadFormat);
        }
        match container {
            QUICKLIST_NODE_PLAIN => out.push(Bytes::from(blob)),
            QUICKLIST_NODE_PACKED => out.extend(to_bytes(listpack_entries(&blob)?)),
            QUICKLIST_NODE_ZIPLIST => out.extend(to_bytes(ziplist_entries(&blob)?)),
            _ => return Err(BadFormat),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::listpack::build_listpack;
    use super::super::ziplist::build_ziplist;
    use super::*;

    #[test]
    fn rejects_empty_duplicate_and_unknown() {
        assert_eq!(decode_object(&[t::SET, 0]), Err(BadFormat));
        assert_eq!(decode_object(&[t::LIST, 0]), Err(BadFormat));
        assert_eq!(
            decode_object(&[t::SET, 2, 1, b'a', 1, b'a']),
            Err(BadFormat)
        );
        assert_eq!(decode_object(&[t::HASH, 1, 1, b'f']), Err(BadFormat));
        for unsupported in [6u8, 7, 8, 9, 15, 19, 21, 22, 23, 26, 255] {
            assert_eq!(decode_object(&[unsupported, 0]), Err(BadFormat));
        }
        let mut nan = vec![t::ZSET_2, 1, 1, b'm'];
        nan.extend_from_slice(&f64::NAN.to_le_bytes());
        assert_eq!(decode_object(&nan), Err(BadFormat));
        assert_eq!(decode_object(&[t::ZSET, 1, 1, b'm', 253]), Err(BadFormat));
    }

    fn with_blob(kind: u8, prefix: &[u8], blob: &[u8]) -> Vec<u8> {
        let mut raw = vec![kind];
        raw.extend_from_slice(prefix);
        crate::dump::rdb_codec::put_string(&mut raw, blob);
        raw
    }

    fn b(s: &[u8]) -> Bytes {
        Bytes::copy_from_slice(s)
    }

    #[test]
    fn set_listpack_and_hash_listpack_with_ttls() {
        let lp = build_listpack(&[&[0x81, b'a'], &[7], &[0x80]]);
        assert_eq!(
            decode_object(&with_blob(t::SET_LISTPACK, &[], &lp)).unwrap(),
            DumpValue::Set(vec![b(b"a"), b(b"7"), b(b"")])
        );
        // field, value, expiry (0 = none; 4102444800123 as a 64-bit int entry).
        let at = 4_102_444_800_123_i64.to_le_bytes();
        let expiry: Vec<u8> = [&[0xf4][..], &at].concat();
        let lp = build_listpack(&[
            &[0x81, b'f'],
            &[0x81, b'v'],
            &expiry,
            &[0x81, b'g'],
            &[1],
            &[0],
        ]);
        let min = 4_102_444_800_123_u64.to_le_bytes();
        assert_eq!(
            decode_object(&with_blob(t::HASH_LISTPACK_EX, &min, &lp)).unwrap(),
            DumpValue::Hash(vec![
                HashField {
                    field: b(b"f"),
                    value: b(b"v"),
                    expire_at_ms: 4_102_444_800_123
                },
                HashField {
                    field: b(b"g"),
                    value: b(b"1"),
                    expire_at_ms: 0
                },
            ])
        );
        let odd = build_listpack(&[&[0x81, b'f'], &[0x81, b'v']]);
        assert_eq!(
            decode_object(&with_blob(t::HASH_LISTPACK_EX, &min, &odd)),
            Err(BadFormat)
        );
        let negative = build_listpack(&[&[0x81, b'f'], &[0x81, b'v'], &[0xdf, 0xff]]);
        assert_eq!(
            decode_object(&with_blob(t::HASH_LISTPACK_EX, &min, &negative)),
            Err(BadFormat)
        );
    }

    #[test]
    fn quicklist_plain_packed_and_empty_nodes() {
        let lp = build_listpack(&[&[0x81, b'a'], &[0x81, b'b']]);
        let empty = build_listpack(&[]);
        let mut raw = vec![t::LIST_QUICKLIST_2, 3, 2];
        crate::dump::rdb_codec::put_string(&mut raw, &lp);
        raw.push(1);
        crate::dump::rdb_codec::put_string(&mut raw, b"plain");
        raw.push(2);
        crate::dump::rdb_codec::put_string(&mut raw, &empty);
        assert_eq!(
            decode_object(&raw).unwrap(),
            DumpValue::List(vec![b(b"a"), b(b"b"), b(b"plain")])
        );
        raw[2] = 3;
        assert_eq!(decode_object(&raw), Err(BadFormat), "unknown container");
        let empty_plain = with_blob(t::LIST_QUICKLIST_2, &[1, 1], b"");
        assert_eq!(decode_object(&empty_plain), Err(BadFormat), "empty blob");
        let only_empty = with_blob(t::LIST_QUICKLIST_2, &[1, 2], &empty);
        assert_eq!(decode_object(&only_empty), Err(BadFormat), "empty list");
    }

    #[test]
    fn redis_6_ziplist_types() {
        let zl = build_ziplist(&[&[0x01, b'f'], &[0x01, b'v'], &[0x01, b'n'], &[0xf3]]);
        assert_eq!(
            decode_object(&with_blob(t::HASH_ZIPLIST, &[], &zl)).unwrap(),
            DumpValue::Hash(vec![
                HashField {
                    field: b(b"f"),
                    value: b(b"v"),
                    expire_at_ms: 0
                },
                HashField {
                    field: b(b"n"),
                    value: b(b"2"),
                    expire_at_ms: 0
                },
            ])
        );
        let dup = build_ziplist(&[&[0x01, b'f'], &[0x01, b'v'], &[0x01, b'f'], &[0xf3]]);
        assert_eq!(
            decode_object(&with_blob(t::HASH_ZIPLIST, &[], &dup)),
            Err(BadFormat)
        );
        let zl = build_ziplist(&[
            &[0x01, b'a'],
            &[0xfe, 0xfd],
            &[0x01, b'b'],
            &[0x03, b'2', b'.', b'5'],
        ]);
        assert_eq!(
            decode_object(&with_blob(t::ZSET_ZIPLIST, &[], &zl)).unwrap(),
            DumpValue::Zset(vec![(b(b"a"), -3.0), (b(b"b"), 2.5)])
        );
        let zl = build_ziplist(&[&[0x01, b'x'], &[0xf1]]);
        assert_eq!(
            decode_object(&with_blob(t::LIST_ZIPLIST, &[], &zl)).unwrap(),
            DumpValue::List(vec![b(b"x"), b(b"0")])
        );
        // Type 14: nodes without a container byte; an empty ziplist node is skipped.
        let mut raw = vec![t::LIST_QUICKLIST, 3];
        crate::dump::rdb_codec::put_string(&mut raw, &zl);
        crate::dump::rdb_codec::put_string(&mut raw, &build_ziplist(&[]));
        crate::dump::rdb_codec::put_string(&mut raw, &build_ziplist(&[&[0x01, b'y']]));
        assert_eq!(
            decode_object(&raw).unwrap(),
            DumpValue::List(vec![b(b"x"), b(b"0"), b(b"y")])
        );
    }

    #[test]
    fn field_expiry_bounds() {
        // Type 24: min_expire 2^48 - 1, ttl 2 → one past the largest field expiry.
        let mut raw = vec![t::HASH_METADATA];
        raw.extend_from_slice(&MAX_FIELD_EXPIRE_MS.to_le_bytes());
        raw.extend_from_slice(&[1, 2, 1, b'f', 1, b'v']);
        assert_eq!(decode_object(&raw), Err(BadFormat));
        raw[10] = 1;
        assert_eq!(
            decode_object(&raw).unwrap(),
            DumpValue::Hash(vec![HashField {
                field: b(b"f"),
                value: b(b"v"),
                expire_at_ms: MAX_FIELD_EXPIRE_MS
            }])
        );
    }

    #[test]
    fn old_text_scores_decode() {
        let raw = [t::ZSET, 2, 1, b'a', 3, b'1', b'.', b'5', 1, b'b', 255];
        assert_eq!(
            decode_object(&raw).unwrap(),
            DumpValue::Zset(vec![
                (Bytes::from_static(b"a"), 1.5),
                (Bytes::from_static(b"b"), f64::NEG_INFINITY)
            ])
        );
    }
}
