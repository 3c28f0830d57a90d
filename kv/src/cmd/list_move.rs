//! Commands that move elements between lists or pop from the first of several: LMOVE,
//! RPOPLPUSH, LMPOP, and the shared pieces the blocking forms (`list_blocking.rs`) reuse.
//! Every key involved is locked (in sorted order) before anything is read, and the
//! destination's type is checked before anything is popped, so an error changes nothing.

use crate::args::{arg, is, parse_i64};
use crate::cmd::lists::{End, lock_list, lock_or_create, pop, push, save_list};
use crate::error::{KvError, KvResult};
use crate::reply::Reply;
use crate::store::KvTxn;
use bytes::Bytes;

/// Moves one element from `src`'s `from` end to `dst`'s `to` end (LMOVE and its blocking
/// and legacy forms). `Ok(None)` when `src` is absent. Both keys are locked (sorted) first;
/// `dst`'s type is checked before anything is popped.
pub async fn move_one(
    tx: &mut KvTxn<'_>,
    db: u8,
    src: &[u8],
    dst: &[u8],
    from: End,
    to: End,
) -> KvResult<Option<Bytes>> {
    tx.lock_keys(db, &[src, dst]).await?;
    let Some(mut src_list) = lock_list(tx, db, src).await? else {
        return Ok(None);
    };
    if src == dst {
        let popped = pop(tx, db, src, &mut src_list, from, 1).await?;
        let Some(value) = popped.into_iter().next() else {
            return Ok(None);
        };
        push(tx, db, src, &mut src_list, to, [value.as_ref()]).await?;
        save_list(tx, db, src, &src_list).await?;
        return Ok(Some(value));
    }
    let mut dst_list = lock_or_create(tx, db, dst).await?;
    let popped = pop(tx, db, src, &mut src_list, from, 1).await?;
    let Some(value) = popped.into_iter().next() else {
        return Ok(None);
    };
    push(tx, db, dst, &mut dst_list, to, [value.as_ref()]).await?;
    save_list(tx, db, src, &src_list).await?;
    save_list(tx, db, dst, &dst_list).await?;
    Ok(Some(value))
}

/// LMOVE source destination LEFT|RIGHT LEFT|RIGHT.
pub async fn lmove(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let (src, dst) = (arg(args, 1)?, arg(args, 2)?);
    let from = End::parse(arg(args, 3)?)?;
    let to = End::parse(arg(args, 4)?)?;
    let moved = move_one(tx, db, src, dst, from, to).await?;
    Ok(Reply::bulk_or_null(moved))
}

/// RPOPLPUSH source destination.
pub async fn rpoplpush(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let (src, dst) = (arg(args, 1)?, arg(args, 2)?);
    let moved = move_one(tx, db, src, dst, End::Right, End::Left).await?;
    Ok(Reply::bulk_or_null(moved))
}

/// Parsed `numkeys key [key ...] LEFT|RIGHT [COUNT count]` (LMPOP / BLMPOP).
#[derive(Debug)]
pub struct MpopArgs {
    /// Keys in argument order.
    pub keys: Vec<Bytes>,
    /// End to pop from.
    pub end: End,
    /// Elements to pop (≥ 1).
    pub count: u64,
}

/// Parses LMPOP-style arguments starting at `args[first]` (the numkeys argument).
pub fn parse_mpop(args: &[Bytes], first: usize) -> KvResult<MpopArgs> {
    let numkeys = parse_i64(arg(args, first)?)
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| KvError::command("ERR numkeys should be greater than 0"))?;
    let numkeys = usize::try_from(numkeys).unwrap_or(usize::MAX);
    let where_at = first
        .checked_add(numkeys)
        .and_then(|n| n.checked_add(1))
        .filter(|at| *at < args.len())
        .ok_or_else(KvError::syntax)?;
    let keys = args.get(first + 1..where_at).unwrap_or_default().to_vec();
    let end = End::parse(arg(args, where_at)?)?;
    let mut count = None;
    let mut i = where_at + 1;
    while let Some(option) = args.get(i) {
        match args.get(i + 1) {
            Some(value) if count.is_none() && is(option, "COUNT") => {
                let n = parse_i64(value)
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| KvError::command("ERR count should be greater than 0"))?;
                count = Some(u64::try_from(n).unwrap_or(u64::MAX));
                i += 2;
            }
            _ => return Err(KvError::syntax()),
        }
    }
    Ok(MpopArgs {
        keys,
        end,
        count: count.unwrap_or(1),
    })
}

/// Pops from the first non-empty list of `keys`: `(key, elements)`, or `None` if all are
/// absent. A key of another type met before a list is WRONGTYPE.
pub async fn mpop(
    tx: &mut KvTxn<'_>,
    db: u8,
    keys: &[Bytes],
    end: End,
    count: u64,
) -> KvResult<Option<(Bytes, Vec<Bytes>)>> {
    mpop_lists(tx, db, keys, end, count, false).await
}

/// [`mpop`]; with `skip_other_types`, a key holding another type counts as empty instead of
/// failing with WRONGTYPE (a blocked client re-trying after a wake-up, as Redis: only a list
/// serves it).
pub async fn mpop_lists(
    tx: &mut KvTxn<'_>,
    db: u8,
    keys: &[Bytes],
    end: End,
    count: u64,
    skip_other_types: bool,
) -> KvResult<Option<(Bytes, Vec<Bytes>)>> {
    let refs: Vec<&[u8]> = keys.iter().map(Bytes::as_ref).collect();
    tx.lock_keys(db, &refs).await?;
    for key in keys {
        let list = match lock_list(tx, db, key).await {
            Err(e) if skip_other_types && e.is_wrong_type() => None,
            other => other?,
        };
        if let Some(mut list) = list {
            let popped = pop(tx, db, key, &mut list, end, count).await?;
            save_list(tx, db, key, &list).await?;
            return Ok(Some((key.clone(), popped)));
        }
    }
    Ok(None)
}

/// The `[key, [element ...]]` reply of LMPOP / BLMPOP.
#[must_use]
pub fn mpop_reply(popped: Option<(Bytes, Vec<Bytes>)>) -> Reply {
    match popped {
        Some((key, items)) => Reply::Array(vec![
            Reply::Bulk(key),
            Reply::Array(items.into_iter().map(Reply::Bulk).collect()),
        ]),
        None => Reply::NullArray,
    }
}

/// LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count].
pub async fn lmpop(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let parsed = parse_mpop(args, 1)?;
    let popped = mpop(tx, db, &parsed.keys, parsed.end, parsed.count).await?;
    Ok(mpop_reply(popped))
}
