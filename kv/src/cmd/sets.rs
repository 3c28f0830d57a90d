//! Set commands on one key: SADD, SREM, SMEMBERS, SISMEMBER, SMISMEMBER, SCARD, SPOP,
//! SRANDMEMBER, SSCAN; plus the collection helpers the set-algebra and sorted-set modules
//! share (typed meta reads and locks, member pages, random draws).
//!
//! A set is a meta record (type set, size = member count) plus one `kv_data` record per member
//! with an empty value, under the meta's incarnation. Invariants: `size` equals the number of
//! member records of the live incarnation; a set whose last member is removed is deleted; a
//! writer locks the meta and refreshes its snapshot before reading members. Random draws on
//! big sets seek to random points of the member order instead of reading the whole set.

use crate::args::{arg, parse_i64, parse_i64_opt};
use crate::cmd::generic::{parse_scan_cursor, parse_scan_options};
use crate::error::{KvError, KvResult};
use crate::format::{KeyType, Meta, data_key, data_prefix};
use crate::glob::glob_match;
use crate::kv_server::KvServer;
use crate::reply::Reply;
use crate::store::KvTxn;
use bytes::Bytes;
use orcinus_storage::Direction;
use rand::Rng;
use std::ops::Bound;

/// Sets up to this size are read whole for random draws (exactly uniform); bigger ones are
/// sampled by seeking to random points of the member order.
pub const SAMPLE_ALL_LIMIT: u64 = 64;

/// Largest |count| SRANDMEMBER with a negative count serves (each draw is one reply entry;
/// the bound keeps one request from building an unbounded reply).
pub const MAX_RANDOM_DRAWS: u64 = 1 << 20;

/// The live meta of `key` if it has type `want`; WRONGTYPE for another type.
pub fn read_typed(tx: &KvTxn<'_>, db: u8, key: &[u8], want: KeyType) -> KvResult<Option<Meta>> {
    match tx.meta(db, key)? {
        Some(m) if m.key_type != want => Err(KvError::wrong_type()),
        other => Ok(other),
    }
}

/// Locks `key` for writing and refreshes the snapshot; an absent key yields a new, empty meta
/// of type `want` (not yet written). The flag tells whether the key existed.
pub async fn lock_typed(
    tx: &mut KvTxn<'_>,
    db: u8,
    key: &[u8],
    want: KeyType,
) -> KvResult<(Meta, bool)> {
    let existing = tx.meta_for_update(db, key).await?;
    tx.refresh();
    match existing {
        Some(m) if m.key_type != want => Err(KvError::wrong_type()),
        Some(m) => Ok((m, true)),
        None => Ok((Meta::collection(want, tx.store().new_incarnation()), false)),
    }
}

/// Writes back a collection meta after member changes (deletes the key when empty).
pub async fn store_collection(tx: &mut KvTxn<'_>, db: u8, key: &[u8], meta: &Meta) -> KvResult<()> {
    if meta.size == 0 {
        tx.delete_meta(db, key).await
    } else {
        tx.put_meta(db, key, meta).await
    }
}

/// `meta.size` as a reply integer.
#[must_use]
pub fn size_reply(size: u64) -> Reply {
    Reply::Integer(i64::try_from(size).unwrap_or(i64::MAX))
}

fn upper_of(prefix: &[u8]) -> Option<Vec<u8>> {
    orcinus_storage::prefix_upper_bound(prefix)
}

/// A page of (member, value) pairs and the member to resume from, if any.
pub type MemberPage = (Vec<(Bytes, Bytes)>, Option<Bytes>);

/// Up to `limit` (member, value) pairs of one incarnation from `from` (inclusive) on, and the
/// member to resume from if more remain.
pub fn member_page(
    tx: &KvTxn<'_>,
    db: u8,
    key: &[u8],
    incarnation: u64,
    from: Option<&[u8]>,
    limit: usize,
) -> KvResult<MemberPage> {
    let prefix = data_prefix(db, key, incarnation);
    let mut lower = prefix.clone();
    lower.extend_from_slice(from.unwrap_or_default());
    let upper = upper_of(&prefix);
    let upper_bound = upper.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
    let mut out = Vec::new();
    for item in tx.scan_data(Bound::Included(&lower), upper_bound, Direction::Forward) {
        let (k, v) = item?;
        let member = Bytes::copy_from_slice(k.get(prefix.len()..).unwrap_or_default());
        if out.len() >= limit {
            return Ok((out, Some(member)));
        }
        out.push((member, Bytes::copy_from_slice(&v)));
    }
    Ok((out, None))
}

/// The first (or last) member of one incarnation.
fn edge_member(tx: &KvTxn<'_>, prefix: &[u8], dir: Direction) -> KvResult<Option<Bytes>> {
    let upper = upper_of(prefix);
    let upper_bound = upper.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
    match tx
        .scan_data(Bound::Included(prefix), upper_bound, dir)
        .next()
    {
        Some(item) => {
            let (k, _) = item?;
            Ok(Some(Bytes::copy_from_slice(
                k.get(prefix.len()..).unwrap_or_default(),
            )))
        }
        None => Ok(None),
    }
}

/// A random byte string between `first` and `last` (member order), used as a seek point:
/// their common prefix, then bytes drawn from the range of byte values the two use after it
/// (so members over a small alphabet, such as digits, are hit evenly).
fn random_point(first: &[u8], last: &[u8]) -> Vec<u8> {
    let mut rng = rand::rng();
    let common = first.iter().zip(last).take_while(|(a, b)| a == b).count();
    let mut point = first.get(..common).unwrap_or_default().to_vec();
    let lo = first.get(common).copied().unwrap_or(0);
    let hi = last.get(common).copied().unwrap_or(u8::MAX).max(lo);
    point.push(rng.random_range(lo..=hi));
    let tails = || {
        first
            .get(common + 1..)
            .unwrap_or_default()
            .iter()
            .chain(last.get(common + 1..).unwrap_or_default())
            .copied()
    };
    let (tail_lo, tail_hi) = (tails().min().unwrap_or(0), tails().max().unwrap_or(u8::MAX));
    let tail_len = first
        .len()
        .max(last.len())
        .saturating_sub(common + 1)
        .max(1);
    for _ in 0..tail_len {
        point.push(rng.random_range(tail_lo..=tail_hi));
    }
    point
}

/// Draws members of a set (or zset) at random: `count` distinct members (all of them if the
/// collection is smaller), or with `distinct == false` `count` independent draws.
pub fn random_members(
    tx: &KvTxn<'_>,
    db: u8,
    key: &[u8],
    meta: &Meta,
    count: u64,
    distinct: bool,
) -> KvResult<Vec<Bytes>> {
    let mut rng = rand::rng();
    if meta.size <= SAMPLE_ALL_LIMIT || (distinct && count >= meta.size) {
        let mut all: Vec<Bytes> = tx
            .members(db, key, meta.incarnation)?
            .into_iter()
            .map(|(m, _)| m)
            .collect();
        if all.is_empty() {
            return Ok(all);
        }
        if distinct {
            let n = usize::try_from(count).unwrap_or(usize::MAX).min(all.len());
            for i in 0..n {
                let j = rng.random_range(i..all.len());
                all.swap(i, j);
            }
            all.truncate(n);
            return Ok(all);
        }
        let mut out = Vec::new();
        for _ in 0..count {
            if let Some(m) = all.get(rng.random_range(0..all.len())) {
                out.push(m.clone());
            }
        }
        return Ok(out);
    }
    let prefix = data_prefix(db, key, meta.incarnation);
    let (Some(first), Some(last)) = (
        edge_member(tx, &prefix, Direction::Forward)?,
        edge_member(tx, &prefix, Direction::Reverse)?,
    ) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    if distinct {
        // A run of `count` consecutive members from a random point, wrapping once.
        let point = random_point(&first, &last);
        let limit = usize::try_from(count).unwrap_or(usize::MAX);
        let (page, _) = member_page(tx, db, key, meta.incarnation, Some(&point), limit)?;
        out.extend(page.into_iter().map(|(m, _)| m));
        if out.len() < limit {
            let (page, _) = member_page(tx, db, key, meta.incarnation, None, limit - out.len())?;
            out.extend(
                page.into_iter()
                    .map(|(m, _)| m)
                    .filter(|m| m.as_ref() < point.as_slice()),
            );
        }
        return Ok(out);
    }
    for _ in 0..count {
        let point = random_point(&first, &last);
        let (page, _) = member_page(tx, db, key, meta.incarnation, Some(&point), 1)?;
        out.push(
            page.into_iter()
                .next()
                .map_or_else(|| first.clone(), |(m, _)| m),
        );
    }
    Ok(out)
}

/// SADD key member [member ...].
pub async fn sadd(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let (mut meta, _) = lock_typed(tx, db, key, KeyType::Set).await?;
    let mut added = 0u64;
    for member in args.iter().skip(2) {
        let dk = data_key(db, key, meta.incarnation, member);
        if tx.member(&dk)?.is_none() {
            tx.put_member(&dk, b"").await?;
            added += 1;
        }
    }
    if added > 0 {
        meta.size += added;
        store_collection(tx, db, key, &meta).await?;
    }
    Ok(size_reply(added))
}

/// SREM key member [member ...].
pub async fn srem(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let (mut meta, existed) = lock_typed(tx, db, key, KeyType::Set).await?;
    if !existed {
        return Ok(Reply::Integer(0));
    }
    let mut removed = 0u64;
    for member in args.iter().skip(2) {
        let dk = data_key(db, key, meta.incarnation, member);
        if tx.member(&dk)?.is_some() {
            tx.delete_member(&dk).await?;
            removed += 1;
        }
    }
    if removed > 0 {
        meta.size = meta.size.saturating_sub(removed);
        store_collection(tx, db, key, &meta).await?;
    }
    Ok(size_reply(removed))
}

/// All members of the set at `key` (empty if absent), in member order.
pub fn set_members(tx: &KvTxn<'_>, db: u8, key: &[u8]) -> KvResult<Vec<Bytes>> {
    Ok(match read_typed(tx, db, key, KeyType::Set)? {
        Some(meta) => tx
            .members(db, key, meta.incarnation)?
            .into_iter()
            .map(|(m, _)| m)
            .collect(),
        None => Vec::new(),
    })
}

/// SMEMBERS key.
pub fn smembers(tx: &KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let members = set_members(tx, db, arg(args, 1)?)?;
    Ok(Reply::Set(members.into_iter().map(Reply::Bulk).collect()))
}

/// True if `member` is in the set described by `meta`.
pub fn is_member(tx: &KvTxn<'_>, db: u8, key: &[u8], meta: &Meta, member: &[u8]) -> KvResult<bool> {
    Ok(tx
        .member(&data_key(db, key, meta.incarnation, member))?
        .is_some())
}

/// SISMEMBER key member.
pub fn sismember(tx: &KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let found = match read_typed(tx, db, key, KeyType::Set)? {
        Some(meta) => is_member(tx, db, key, &meta, arg(args, 2)?)?,
        None => false,
    };
    Ok(Reply::Integer(i64::from(found)))
}

/// SMISMEMBER key member [member ...].
pub fn smismember(tx: &KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let meta = read_typed(tx, db, key, KeyType::Set)?;
    let mut out = Vec::new();
    for member in args.iter().skip(2) {
        let found = match &meta {
            Some(m) => is_member(tx, db, key, m, member)?,
            None => false,
        };
        out.push(Reply::Integer(i64::from(found)));
    }
    Ok(Reply::Array(out))
}

/// SCARD key.
pub fn scard(tx: &KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let meta = read_typed(tx, db, arg(args, 1)?, KeyType::Set)?;
    Ok(size_reply(meta.map_or(0, |m| m.size)))
}

/// Parses a non-negative count (`ERR value is out of range, must be positive`).
/// Redis gives the same text for a count that is not an integer.
pub fn parse_positive_count(raw: &[u8]) -> KvResult<u64> {
    parse_i64_opt(raw)
        .and_then(|n| u64::try_from(n).ok())
        .ok_or_else(|| KvError::command("ERR value is out of range, must be positive"))
}

/// SPOP key [count].
pub async fn spop(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    if args.len() > 3 {
        return Err(KvError::syntax());
    }
    let count = args.get(2).map(|c| parse_positive_count(c)).transpose()?;
    let (mut meta, existed) = lock_typed(tx, db, key, KeyType::Set).await?;
    if !existed || count == Some(0) {
        return Ok(match count {
            None => Reply::Null,
            Some(_) => Reply::Set(Vec::new()),
        });
    }
    let popped = random_members(tx, db, key, &meta, count.unwrap_or(1), true)?;
    for member in &popped {
        tx.delete_member(&data_key(db, key, meta.incarnation, member))
            .await?;
    }
    meta.size = meta.size.saturating_sub(popped.len() as u64);
    store_collection(tx, db, key, &meta).await?;
    Ok(match count {
        None => Reply::bulk_or_null(popped.first()),
        Some(_) => Reply::Set(popped.into_iter().map(Reply::Bulk).collect()),
    })
}

/// The count argument of SRANDMEMBER / ZRANDMEMBER as `(draws, distinct)`: none → one distinct
/// member; positive → that many distinct members; negative → that many independent draws, capped
/// at [`MAX_RANDOM_DRAWS`] because the reply is built in memory.
pub fn random_draw_count(count: Option<i64>) -> KvResult<(u64, bool)> {
    if count == Some(i64::MIN) {
        return Err(KvError::command(format!(
            "ERR value is out of range, value must between {} and {}",
            -i64::MAX,
            i64::MAX
        )));
    }
    let (n, distinct) = match count {
        None => (1, true),
        Some(c) => (c.unsigned_abs(), c >= 0),
    };
    if !distinct && n > MAX_RANDOM_DRAWS {
        return Err(KvError::command(format!(
            "ERR value is out of range, value must between -{MAX_RANDOM_DRAWS} and {}",
            i64::MAX
        )));
    }
    Ok((n, distinct))
}

/// SRANDMEMBER key [count].
pub fn srandmember(tx: &KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    if args.len() > 3 {
        return Err(KvError::syntax());
    }
    let count = args.get(2).map(|c| parse_i64(c)).transpose()?;
    let (n, distinct) = random_draw_count(count)?;
    let Some(meta) = read_typed(tx, db, key, KeyType::Set)? else {
        return Ok(match count {
            None => Reply::Null,
            Some(_) => Reply::Array(Vec::new()),
        });
    };
    let drawn = if n == 0 {
        Vec::new()
    } else {
        random_members(tx, db, key, &meta, n, distinct)?
    };
    Ok(match count {
        None => Reply::bulk_or_null(drawn.first()),
        Some(_) => Reply::Array(drawn.into_iter().map(Reply::Bulk).collect()),
    })
}

/// A SSCAN / ZSCAN page: `(next cursor, entries)`; entries are (member, value) pairs.
pub fn scan_page(
    server: &KvServer,
    tx: &KvTxn<'_>,
    db: u8,
    args: &[Bytes],
    meta: Option<&Meta>,
) -> KvResult<(u64, Vec<(Bytes, Bytes)>)> {
    let key = arg(args, 1)?;
    // As Redis: a missing key is an empty scan whatever the options.
    let Some(meta) = meta else {
        return Ok((0, Vec::new()));
    };
    let opts = parse_scan_options(args, 2, false)?;
    let resume = match opts.cursor {
        0 => None,
        c => Some(
            server
                .cursors
                .resume_key(db, c)
                .ok_or_else(|| KvError::command("ERR invalid cursor"))?,
        ),
    };
    let (page, next) = member_page(tx, db, key, meta.incarnation, resume.as_deref(), opts.count)?;
    let cursor = next.map_or(0, |m| server.cursors.store(db, m));
    let matching = page
        .into_iter()
        .filter(|(m, _)| opts.pattern.as_deref().is_none_or(|p| glob_match(p, m)))
        .collect();
    Ok((cursor, matching))
}

/// SSCAN key cursor [MATCH pattern] [COUNT count]: pages in member order.
pub fn sscan(server: &KvServer, tx: &KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    // As Redis: the cursor, then the key's type, then the options (in scan_page).
    parse_scan_cursor(arg(args, 2)?)?;
    let meta = read_typed(tx, db, arg(args, 1)?, KeyType::Set)?;
    let (cursor, page) = scan_page(server, tx, db, args, meta.as_ref())?;
    Ok(Reply::Array(vec![
        Reply::bulk(cursor.to_string()),
        Reply::Array(page.into_iter().map(|(m, _)| Reply::Bulk(m)).collect()),
    ]))
}
