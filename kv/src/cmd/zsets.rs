//! Sorted-set commands on members: ZADD, ZINCRBY, ZREM, ZCARD, ZSCORE, ZMSCORE, ZPOPMIN,
//! ZPOPMAX, ZRANDMEMBER, ZSCAN; plus the member primitives the range and store modules share.
//!
//! A sorted set is a meta record (type zset, size = member count), one `kv_data` record per
//! member (value: version byte + score) and one `kv_score` index entry per member
//! (`prefix | score | member`), both under the meta's incarnation. Invariants: the two records
//! of a member are always written and deleted together, so the index holds exactly one entry
//! per member, with its current score; `size` equals the member count; an emptied sorted set
//! is deleted; a writer locks the meta and refreshes its snapshot before reading members.
//! Pops and score ranges are scans of the index, never reads of the whole set.

use crate::args::{arg, is, parse_i64};
use crate::cmd::sets::{
    lock_typed, parse_positive_count, random_draw_count, random_members, read_typed, scan_page,
    size_reply, store_collection,
};
use crate::error::{KvError, KvResult};
use crate::format::{KeyType, Meta, data_key, data_prefix};
use crate::kv_server::KvServer;
use crate::reply::Reply;
use crate::score::{
    PopHints, decode_member_value, encode_member_value, encode_score, format_score, parse_score,
    score_key, score_suffix, split_score_entry,
};
use crate::store::KvTxn;
use bytes::Bytes;
use orcinus_storage::Direction;
use std::ops::Bound;

/// `ERR resulting score is not a number (NaN)`.
const NAN_SCORE: &str = "ERR resulting score is not a number (NaN)";

/// The live zset meta of `key`; WRONGTYPE for another type.
pub fn read_zset(tx: &KvTxn<'_>, db: u8, key: &[u8]) -> KvResult<Option<Meta>> {
    read_typed(tx, db, key, KeyType::Zset)
}

/// The score of `member`, if it is in the sorted set.
pub fn score_of(
    tx: &KvTxn<'_>,
    db: u8,
    key: &[u8],
    incarnation: u64,
    member: &[u8],
) -> KvResult<Option<f64>> {
    tx.member(&data_key(db, key, incarnation, member))?
        .map(|v| decode_member_value(&v))
        .transpose()
}

/// Sets `member`'s score to `new` (its current score is `old`), keeping the index and the pop
/// hints in `meta` in step (the caller writes `meta` back).
pub async fn set_score(
    tx: &mut KvTxn<'_>,
    (db, key): (u8, &[u8]),
    meta: &mut Meta,
    member: &[u8],
    old: Option<f64>,
    new: f64,
) -> KvResult<()> {
    let incarnation = meta.incarnation;
    if let Some(old) = old {
        if encode_score(old) == encode_score(new) {
            return Ok(());
        }
        tx.delete_score_entry(&score_key(db, key, incarnation, old, member))
            .await?;
    }
    tx.put_member(
        &data_key(db, key, incarnation, member),
        &encode_member_value(new),
    )
    .await?;
    tx.put_score_entry(&score_key(db, key, incarnation, new, member))
        .await?;
    let mut hints = PopHints::decode(&meta.inline)?;
    if hints.note_insert(&score_suffix(new, member)) {
        meta.inline = hints.encode();
    }
    Ok(())
}

/// Removes `member` (whose score is `score`) and its index entry.
pub async fn remove_member(
    tx: &mut KvTxn<'_>,
    (db, key, incarnation): (u8, &[u8], u64),
    member: &[u8],
    score: f64,
) -> KvResult<()> {
    tx.delete_member(&data_key(db, key, incarnation, member))
        .await?;
    tx.delete_score_entry(&score_key(db, key, incarnation, score, member))
        .await
}

/// (member, score) pairs as a reply: members only; with scores and `as_pairs`, a
/// [`Reply::Pairs`] of member and [`Reply::Double`] (nested `[member, score]` arrays in RESP3,
/// flat in RESP2); with scores and not `as_pairs`, one flat array in both protocols (Redis's
/// shape for ZPOPMIN / ZPOPMAX without a count).
#[must_use]
pub fn entries_reply(entries: Vec<(Bytes, f64)>, withscores: bool, as_pairs: bool) -> Reply {
    if !withscores {
        return Reply::Array(entries.into_iter().map(|(m, _)| Reply::Bulk(m)).collect());
    }
    if as_pairs {
        return Reply::Pairs(
            entries
                .into_iter()
                .map(|(m, s)| (Reply::Bulk(m), Reply::Double(s)))
                .collect(),
        );
    }
    let mut flat = Vec::new();
    for (m, s) in entries {
        flat.push(Reply::Bulk(m));
        flat.push(Reply::Double(s));
    }
    Reply::Array(flat)
}

/// ZADD's flags.
#[derive(Debug, Default, Clone, Copy)]
struct ZaddFlags {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
    ch: bool,
    incr: bool,
}

/// ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...].
pub async fn zadd(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let mut f = ZaddFlags::default();
    let mut i = 2;
    while let Some(option) = args.get(i) {
        let flag = match () {
            () if is(option, "NX") => &mut f.nx,
            () if is(option, "XX") => &mut f.xx,
            () if is(option, "GT") => &mut f.gt,
            () if is(option, "LT") => &mut f.lt,
            () if is(option, "CH") => &mut f.ch,
            () if is(option, "INCR") => &mut f.incr,
            () => break,
        };
        *flag = true;
        i += 1;
    }
    let rest = args.get(i..).unwrap_or_default();
    if rest.is_empty() || !rest.len().is_multiple_of(2) {
        return Err(KvError::syntax());
    }
    if f.nx && f.xx {
        return Err(KvError::command(
            "ERR XX and NX options at the same time are not compatible",
        ));
    }
    if (f.nx && (f.gt || f.lt)) || (f.gt && f.lt) {
        return Err(KvError::command(
            "ERR GT, LT, and/or NX options at the same time are not compatible",
        ));
    }
    if f.incr && rest.len() > 2 {
        return Err(KvError::command(
            "ERR INCR option supports a single increment-element pair",
        ));
    }
    let mut pairs = Vec::new();
    for pair in rest.chunks_exact(2) {
        if let (Some(score), Some(member)) = (pair.first(), pair.get(1)) {
            pairs.push((parse_score(score)?, member));
        }
    }
    zadd_pairs(tx, db, key, f, &pairs).await
}

async fn zadd_pairs(
    tx: &mut KvTxn<'_>,
    db: u8,
    key: &[u8],
    f: ZaddFlags,
    pairs: &[(f64, &Bytes)],
) -> KvResult<Reply> {
    let (mut meta, existed) = lock_typed(tx, db, key, KeyType::Zset).await?;
    let (mut added, mut updated, mut processed) = (0u64, 0u64, 0u64);
    let mut last_score = 0.0;
    if existed || !f.xx {
        for &(score, member) in pairs {
            match score_of(tx, db, key, meta.incarnation, member)? {
                Some(current) => {
                    if f.nx {
                        continue;
                    }
                    let new = if f.incr { score + current } else { score };
                    if new.is_nan() {
                        return Err(KvError::command(NAN_SCORE));
                    }
                    if (f.lt && new >= current) || (f.gt && new <= current) {
                        continue;
                    }
                    processed += 1;
                    last_score = new;
                    if new != current {
                        set_score(tx, (db, key), &mut meta, member, Some(current), new).await?;
                        updated += 1;
                    }
                }
                None if f.xx => {}
                None => {
                    set_score(tx, (db, key), &mut meta, member, None, score).await?;
                    added += 1;
                    processed += 1;
                    last_score = score;
                }
            }
        }
    }
    if added + updated > 0 {
        meta.size += added;
        tx.put_meta(db, key, &meta).await?;
    }
    Ok(if f.incr {
        if processed > 0 {
            Reply::Double(last_score)
        } else {
            Reply::Null
        }
    } else {
        size_reply(if f.ch { added + updated } else { added })
    })
}

/// ZINCRBY key increment member.
pub async fn zincrby(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let increment = parse_score(arg(args, 2)?)?;
    let flags = ZaddFlags {
        incr: true,
        ..ZaddFlags::default()
    };
    zadd_pairs(tx, db, key, flags, &[(increment, arg(args, 3)?)]).await
}

/// ZREM key member [member ...].
pub async fn zrem(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let (mut meta, existed) = lock_typed(tx, db, key, KeyType::Zset).await?;
    if !existed {
        return Ok(Reply::Integer(0));
    }
    let mut removed = 0u64;
    for member in args.iter().skip(2) {
        if let Some(score) = score_of(tx, db, key, meta.incarnation, member)? {
            remove_member(tx, (db, key, meta.incarnation), member, score).await?;
            removed += 1;
        }
    }
    if removed > 0 {
        meta.size = meta.size.saturating_sub(removed);
        store_collection(tx, db, key, &meta).await?;
    }
    Ok(size_reply(removed))
}

/// ZCARD key.
pub fn zcard(tx: &KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    Ok(size_reply(
        read_zset(tx, db, arg(args, 1)?)?.map_or(0, |m| m.size),
    ))
}

/// ZSCORE key member.
pub fn zscore(tx: &KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let Some(meta) = read_zset(tx, db, key)? else {
        return Ok(Reply::Null);
    };
    Ok(score_of(tx, db, key, meta.incarnation, arg(args, 2)?)?.map_or(Reply::Null, Reply::Double))
}

/// ZMSCORE key member [member ...].
pub fn zmscore(tx: &KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let meta = read_zset(tx, db, key)?;
    let mut out = Vec::new();
    for member in args.iter().skip(2) {
        let score = match &meta {
            Some(m) => score_of(tx, db, key, m.incarnation, member)?,
            None => None,
        };
        out.push(score.map_or(Reply::Null, Reply::Double));
    }
    Ok(Reply::Array(out))
}

/// The first `limit` index entries of one incarnation, lowest (`Forward`) or highest first,
/// starting the scan at the pop hints.
pub fn index_edge(
    tx: &KvTxn<'_>,
    (db, key, incarnation): (u8, &[u8], u64),
    hints: &PopHints,
    dir: Direction,
    limit: usize,
) -> KvResult<Vec<(Bytes, f64)>> {
    let prefix = data_prefix(db, key, incarnation);
    let with = |suffix: &Vec<u8>| [prefix.as_slice(), suffix].concat();
    let lower = hints.floor.as_ref().map_or_else(|| prefix.clone(), with);
    let upper = match &hints.ceiling {
        Some(c) => Bound::Included(with(c)),
        None => {
            orcinus_storage::prefix_upper_bound(&prefix).map_or(Bound::Unbounded, Bound::Excluded)
        }
    };
    let mut out = Vec::new();
    for item in tx.scan_scores(
        Bound::Included(&lower),
        upper.as_ref().map(Vec::as_slice),
        dir,
    ) {
        if out.len() >= limit {
            break;
        }
        let (k, _) = item?;
        let (score, member) = split_score_entry(k.get(prefix.len()..).unwrap_or_default())?;
        out.push((Bytes::copy_from_slice(member), score));
    }
    Ok(out)
}

/// ZPOPMIN / ZPOPMAX key [count].
pub async fn zpop(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes], dir: Direction) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    if args.len() > 3 {
        return Err(KvError::syntax());
    }
    let count = args.get(2).map(|c| parse_positive_count(c)).transpose()?;
    let (mut meta, existed) = lock_typed(tx, db, key, KeyType::Zset).await?;
    if !existed || count == Some(0) {
        return Ok(Reply::Array(Vec::new()));
    }
    let limit = usize::try_from(count.unwrap_or(1)).unwrap_or(usize::MAX);
    let mut hints = PopHints::decode(&meta.inline)?;
    let popped = index_edge(tx, (db, key, meta.incarnation), &hints, dir, limit)?;
    for (member, score) in &popped {
        remove_member(tx, (db, key, meta.incarnation), member, *score).await?;
    }
    // Everything on the popped side of the last popped entry is now deleted.
    if let Some((member, score)) = popped.last() {
        let edge = Some(score_suffix(*score, member));
        match dir {
            Direction::Forward => hints.floor = edge,
            Direction::Reverse => hints.ceiling = edge,
        }
        meta.inline = hints.encode();
    }
    meta.size = meta.size.saturating_sub(popped.len() as u64);
    store_collection(tx, db, key, &meta).await?;
    Ok(entries_reply(popped, true, count.is_some()))
}

/// ZRANDMEMBER key [count [WITHSCORES]]: distinct members for a positive count, independent
/// draws (repeats allowed) for a negative one; see [`random_members`] for the sampling.
pub fn zrandmember(tx: &KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    if args.len() > 4 {
        return Err(KvError::syntax());
    }
    let count = args.get(2).map(|c| parse_i64(c)).transpose()?;
    let withscores = match args.get(3) {
        Some(option) if is(option, "WITHSCORES") => true,
        Some(_) => return Err(KvError::syntax()),
        None => false,
    };
    let (n, distinct) = random_draw_count(count)?;
    let Some(meta) = read_zset(tx, db, key)? else {
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
    if count.is_none() {
        return Ok(Reply::bulk_or_null(drawn.first()));
    }
    let mut entries = Vec::new();
    for member in drawn {
        let score = score_of(tx, db, key, meta.incarnation, &member)?
            .ok_or_else(|| KvError::Corrupt("zset member without a score".into()))?;
        entries.push((member, score));
    }
    Ok(entries_reply(entries, withscores, true))
}

/// ZSCAN key cursor [MATCH pattern] [COUNT count]: pages in member order; scores are bulk
/// strings in both protocols (as Redis).
pub fn zscan(server: &KvServer, tx: &KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    // As Redis: the cursor, then the key's type, then the options (in scan_page).
    crate::cmd::generic::parse_scan_cursor(arg(args, 2)?)?;
    let meta = read_zset(tx, db, arg(args, 1)?)?;
    let (cursor, page) = scan_page(server, tx, db, args, meta.as_ref())?;
    let mut flat = Vec::new();
    for (member, value) in page {
        flat.push(Reply::Bulk(member));
        flat.push(Reply::bulk(format_score(decode_member_value(&value)?)));
    }
    Ok(Reply::Array(vec![
        Reply::bulk(cursor.to_string()),
        Reply::Array(flat),
    ]))
}

/// Copies the score index of `src` (incarnation `src_inc`) to `dst` under `dst_inc` (RENAME /
/// COPY of a sorted set; the members themselves are copied with the other collections').
pub async fn copy_score_index(
    tx: &mut KvTxn<'_>,
    src: (u8, &[u8]),
    src_inc: u64,
    dst: (u8, &[u8]),
    dst_inc: u64,
) -> KvResult<()> {
    tx.refresh();
    let entries = index_edge(
        tx,
        (src.0, src.1, src_inc),
        &PopHints::default(),
        Direction::Forward,
        usize::MAX,
    )?;
    for (member, score) in entries {
        tx.put_score_entry(&score_key(dst.0, dst.1, dst_inc, score, &member))
            .await?;
    }
    Ok(())
}
