//! Sorted-set range commands: ZRANGE (BYSCORE, BYLEX, REV, LIMIT, WITHSCORES), ZRANGEBYSCORE,
//! ZREVRANGEBYSCORE, ZRANGEBYLEX, ZREVRANGEBYLEX, ZREVRANGE, ZCOUNT, ZLEXCOUNT, ZRANK,
//! ZREVRANK, ZREMRANGEBYRANK, ZREMRANGEBYSCORE, ZREMRANGEBYLEX.
//!
//! Costs: score ranges are range scans of the `kv_score` index (O(log n + offset + returned));
//! lex ranges are range scans of the members in `kv_data` (member order, which is Redis's
//! order when all scores are equal — the only case in which Redis defines lex ranges); rank
//! ranges walk the index from the nearer end, and ZRANK (ZREVRANK) counts the entries before
//! (after) the member, so both cost O(rank). Index scans start at the zset's pop hints
//! ([`PopHints`]). Invariant: a scan is only issued for a non-empty key range (inverted
//! ranges answer empty, never panic).

use crate::args::{arg, is, parse_i64};
use crate::cmd::sets::{lock_typed, size_reply, store_collection};
use crate::cmd::zset_range_args::{
    LexBound, RangeCommand, RangeRequest, Selection, parse_lex_range, parse_range_request,
    parse_score_range,
};
use crate::cmd::zsets::{entries_reply, read_zset, remove_member, score_of};
use crate::error::{KvError, KvResult};
use crate::format::{KeyType, Meta, data_prefix};
use crate::reply::Reply;
use crate::score::{PopHints, decode_member_value, score_key, score_prefix, split_score_entry};
use crate::store::KvTxn;
use bytes::Bytes;
use orcinus_storage::{Direction, ScanIter, prefix_upper_bound};
use std::ops::Bound;

/// A scan over `[lower, upper]`, or `None` when that key range is empty.
fn bounded(
    lower: Bound<Vec<u8>>,
    upper: Bound<Vec<u8>>,
    scan: impl FnOnce(Bound<&[u8]>, Bound<&[u8]>) -> ScanIter,
) -> Option<ScanIter> {
    let key = |b: &Bound<Vec<u8>>| match b {
        Bound::Included(k) | Bound::Excluded(k) => Some(k.clone()),
        Bound::Unbounded => None,
    };
    if let (Some(lo), Some(hi)) = (key(&lower), key(&upper)) {
        let open = matches!(lower, Bound::Excluded(_)) || matches!(upper, Bound::Excluded(_));
        if lo > hi || (lo == hi && open) {
            return None;
        }
    }
    Some(scan(
        lower.as_ref().map(Vec::as_slice),
        upper.as_ref().map(Vec::as_slice),
    ))
}

fn after_prefix(prefix: &[u8]) -> Bound<Vec<u8>> {
    prefix_upper_bound(prefix).map_or(Bound::Unbounded, Bound::Excluded)
}

/// Resolves Redis rank indexes against `size`; `None` when the range is empty.
fn resolve_ranks(size: u64, start: i64, end: i64) -> Option<(u64, u64)> {
    let len = i64::try_from(size).ok()?;
    let start = if start < 0 { start + len } else { start }.max(0);
    let end = if end < 0 { end + len } else { end };
    if start > end || start >= len {
        return None;
    }
    let end = end.min(len - 1);
    Some((u64::try_from(start).ok()?, u64::try_from(end).ok()?))
}

/// Narrows an index key range to the sorted set's pop hints: no live entry lies outside
/// `[floor, ceiling]`, so the scan can seek past the tombstones of popped entries.
fn clamp_to_hints(
    (lower, upper): (Bound<Vec<u8>>, Bound<Vec<u8>>),
    prefix: &[u8],
    hints: &PopHints,
) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
    let with = |suffix: &Vec<u8>| [prefix, suffix].concat();
    let lower = match hints.floor.as_ref().map(with) {
        Some(floor) => match lower {
            Bound::Included(k) | Bound::Excluded(k) if k < floor => Bound::Included(floor),
            Bound::Unbounded => Bound::Included(floor),
            kept => kept,
        },
        None => lower,
    };
    let upper = match hints.ceiling.as_ref().map(with) {
        Some(ceiling) => match upper {
            Bound::Included(k) | Bound::Excluded(k) if k > ceiling => Bound::Included(ceiling),
            Bound::Unbounded => Bound::Included(ceiling),
            kept => kept,
        },
        None => upper,
    };
    (lower, upper)
}

/// Visits the selected (member, score) entries in order (highest first when `rev`), skipping
/// `offset` and stopping after `limit`. Rank ranges are walked from the nearer end of the
/// index (and then visited in the requested order).
fn walk(
    tx: &KvTxn<'_>,
    (db, key, meta): (u8, &[u8], &Meta),
    sel: &Selection,
    rev: bool,
    mut offset: u64,
    mut limit: Option<u64>,
    mut visit: impl FnMut(Bytes, f64),
) -> KvResult<()> {
    let mut dir = if rev {
        Direction::Reverse
    } else {
        Direction::Forward
    };
    let mut flipped = false;
    let prefix = data_prefix(db, key, meta.incarnation);
    let hints = PopHints::decode(&meta.inline)?;
    let (iter, from_index) = match sel {
        Selection::Rank(start, end) => {
            let Some((s, e)) = resolve_ranks(meta.size, *start, *end) else {
                return Ok(());
            };
            (offset, limit) = (s, Some(e - s + 1));
            // Ranks s..=e counted from one end are size-1-e..=size-1-s from the other.
            if meta.size - s < e + 1 {
                flipped = true;
                offset = meta.size - 1 - e;
                dir = if rev {
                    Direction::Forward
                } else {
                    Direction::Reverse
                };
            }
            let range = (Bound::Included(prefix.clone()), after_prefix(&prefix));
            let (lower, upper) = clamp_to_hints(range, &prefix, &hints);
            let it = bounded(lower, upper, |l, u| tx.scan_scores(l, u, dir));
            (it, true)
        }
        Selection::Score(min, max) => {
            let lo = score_prefix(db, key, meta.incarnation, min.value);
            let hi = score_prefix(db, key, meta.incarnation, max.value);
            let lower = if min.exclusive {
                match prefix_upper_bound(&lo) {
                    Some(k) => Bound::Included(k),
                    None => return Ok(()),
                }
            } else {
                Bound::Included(lo)
            };
            let upper = if max.exclusive {
                Bound::Excluded(hi)
            } else {
                after_prefix(&hi)
            };
            let (lower, upper) = clamp_to_hints((lower, upper), &prefix, &hints);
            (
                bounded(lower, upper, |l, u| tx.scan_scores(l, u, dir)),
                true,
            )
        }
        Selection::Lex(min, max) => {
            let with = |m: &Bytes| [prefix.as_slice(), m].concat();
            let lower = match min {
                LexBound::NegInf => Bound::Included(prefix.clone()),
                LexBound::Incl(m) => Bound::Included(with(m)),
                LexBound::Excl(m) => Bound::Excluded(with(m)),
                LexBound::PosInf => return Ok(()),
            };
            let upper = match max {
                LexBound::PosInf => after_prefix(&prefix),
                LexBound::Incl(m) => Bound::Included(with(m)),
                LexBound::Excl(m) => Bound::Excluded(with(m)),
                LexBound::NegInf => return Ok(()),
            };
            (bounded(lower, upper, |l, u| tx.scan_data(l, u, dir)), false)
        }
    };
    let Some(iter) = iter else {
        return Ok(());
    };
    let mut backwards = Vec::new();
    for item in iter {
        if limit == Some(0) {
            break;
        }
        let (k, v) = item?;
        if offset > 0 {
            offset -= 1;
            continue;
        }
        let suffix = k.get(prefix.len()..).unwrap_or_default();
        let (member, score) = if from_index {
            let (score, member) = split_score_entry(suffix)?;
            (Bytes::copy_from_slice(member), score)
        } else {
            (Bytes::copy_from_slice(suffix), decode_member_value(&v)?)
        };
        if flipped {
            backwards.push((member, score));
        } else {
            visit(member, score);
        }
        limit = limit.map(|l| l - 1);
    }
    for (member, score) in backwards.into_iter().rev() {
        visit(member, score);
    }
    Ok(())
}

/// The entries `req` selects from the sorted set at `key` (`None` if the key is absent).
pub fn range_entries(
    tx: &KvTxn<'_>,
    db: u8,
    key: &[u8],
    req: &RangeRequest,
) -> KvResult<Option<Vec<(Bytes, f64)>>> {
    let Some(meta) = read_zset(tx, db, key)? else {
        return Ok(None);
    };
    let mut entries = Vec::new();
    let Ok(offset) = u64::try_from(req.offset) else {
        return Ok(Some(entries));
    };
    let limit = u64::try_from(req.limit).ok();
    walk(
        tx,
        (db, key, &meta),
        &req.sel,
        req.rev,
        offset,
        limit,
        |m, s| {
            entries.push((m, s));
        },
    )?;
    Ok(Some(entries))
}

/// ZRANGE and its older forms (see [`RangeCommand`]).
pub fn zrange(tx: &KvTxn<'_>, db: u8, args: &[Bytes], cmd: RangeCommand) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let req = parse_range_request(args, 2, cmd)?;
    let entries = range_entries(tx, db, key, &req)?.unwrap_or_default();
    Ok(entries_reply(entries, req.withscores, true))
}

/// ZCOUNT key min max / ZLEXCOUNT key min max.
pub fn zcount(tx: &KvTxn<'_>, db: u8, args: &[Bytes], lex: bool) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let (a, b) = (arg(args, 2)?, arg(args, 3)?);
    let sel = if lex {
        parse_lex_range(a, b)?
    } else {
        parse_score_range(a, b)?
    };
    let Some(meta) = read_zset(tx, db, key)? else {
        return Ok(Reply::Integer(0));
    };
    let mut n = 0u64;
    walk(tx, (db, key, &meta), &sel, false, 0, None, |_, _| n += 1)?;
    Ok(size_reply(n))
}

/// ZRANK / ZREVRANK key member [WITHSCORE]: O(rank) walk of the score index.
pub fn zrank(tx: &KvTxn<'_>, db: u8, args: &[Bytes], rev: bool) -> KvResult<Reply> {
    let (key, member) = (arg(args, 1)?, arg(args, 2)?);
    if args.len() > 4 {
        return Err(KvError::arity(if rev { "zrevrank" } else { "zrank" }));
    }
    let withscore = match args.get(3) {
        Some(option) if is(option, "WITHSCORE") => true,
        Some(_) => return Err(KvError::syntax()),
        None => false,
    };
    let missing = if withscore {
        Reply::NullArray
    } else {
        Reply::Null
    };
    let Some(meta) = read_zset(tx, db, key)? else {
        return Ok(missing);
    };
    let Some(score) = score_of(tx, db, key, meta.incarnation, member)? else {
        return Ok(missing);
    };
    let prefix = data_prefix(db, key, meta.incarnation);
    let own = score_key(db, key, meta.incarnation, score, member);
    let range = if rev {
        (Bound::Excluded(own), after_prefix(&prefix))
    } else {
        (Bound::Included(prefix.clone()), Bound::Excluded(own))
    };
    let (lower, upper) = clamp_to_hints(range, &prefix, &PopHints::decode(&meta.inline)?);
    let iter = bounded(lower, upper, |l, u| {
        tx.scan_scores(l, u, Direction::Forward)
    });
    let mut rank = 0i64;
    for item in iter.into_iter().flatten() {
        item?;
        rank += 1;
    }
    Ok(if withscore {
        Reply::Array(vec![Reply::Integer(rank), Reply::Double(score)])
    } else {
        Reply::Integer(rank)
    })
}

/// Which ZREMRANGEBY* command runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoveBy {
    /// ZREMRANGEBYRANK.
    Rank,
    /// ZREMRANGEBYSCORE.
    Score,
    /// ZREMRANGEBYLEX.
    Lex,
}

/// ZREMRANGEBYRANK / ZREMRANGEBYSCORE / ZREMRANGEBYLEX key a b.
pub async fn zremrange(
    tx: &mut KvTxn<'_>,
    db: u8,
    args: &[Bytes],
    by: RemoveBy,
) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let (a, b) = (arg(args, 2)?, arg(args, 3)?);
    let sel = match by {
        RemoveBy::Rank => Selection::Rank(parse_i64(a)?, parse_i64(b)?),
        RemoveBy::Score => parse_score_range(a, b)?,
        RemoveBy::Lex => parse_lex_range(a, b)?,
    };
    let (mut meta, existed) = lock_typed(tx, db, key, KeyType::Zset).await?;
    if !existed {
        return Ok(Reply::Integer(0));
    }
    let mut doomed = Vec::new();
    walk(tx, (db, key, &meta), &sel, false, 0, None, |m, s| {
        doomed.push((m, s));
    })?;
    for (member, score) in &doomed {
        remove_member(tx, (db, key, meta.incarnation), member, *score).await?;
    }
    if !doomed.is_empty() {
        meta.size = meta.size.saturating_sub(doomed.len() as u64);
        store_collection(tx, db, key, &meta).await?;
    }
    Ok(size_reply(doomed.len() as u64))
}
