//! List commands that search or edit the middle of a list: LPOS, LINSERT, LREM.
//!
//! Elements occupy the contiguous indexes `head..tail` (see `lists.rs`), so an insertion or
//! removal in the middle must move elements. Costs, with n the list length:
//! - LPOS: reads at most up to the last match needed (or MAXLEN elements), in chunks.
//! - LINSERT: reads up to the pivot, then rewrites the shorter side of the insertion point,
//!   O(min(q, n - q)) writes (the head side moves down, or the tail side moves up).
//! - LREM: reads the whole list (O(n)), then rewrites the shorter span between the list ends
//!   and the outermost removed element.
//!
//! Invariant: every argument is validated before the first write.

use crate::args::{arg, is, parse_i64, parse_i64_opt};
use crate::cmd::lists::{List, SCAN_CHUNK, lock_list, range, read_list, save_list};
use crate::error::{KvError, KvResult};
use crate::reply::Reply;
use crate::store::KvTxn;
use bytes::Bytes;

/// Calls `visit(offset, element)` for elements from the head (or from the tail when
/// `reverse`), in chunks, until it returns false or `limit` elements were visited.
fn walk(
    tx: &KvTxn<'_>,
    db: u8,
    key: &[u8],
    list: &List,
    reverse: bool,
    limit: u64,
    mut visit: impl FnMut(u64, &Bytes) -> bool,
) -> KvResult<()> {
    let len = list.len();
    let limit = limit.min(len);
    let chunk = SCAN_CHUNK as u64;
    let mut done = 0u64;
    while done < limit {
        let n = chunk.min(limit - done);
        let items = if reverse {
            range(tx, db, key, list, len - done - n, len - done, true)?
        } else {
            range(tx, db, key, list, done, done + n, false)?
        };
        for (i, item) in (0u64..).zip(items.iter()) {
            let offset = if reverse {
                len - 1 - (done + i)
            } else {
                done + i
            };
            if !visit(offset, item) {
                return Ok(());
            }
        }
        done += n;
    }
    Ok(())
}

fn option_count(raw: &[u8], message: &str) -> KvResult<u64> {
    parse_i64_opt(raw)
        .and_then(|n| u64::try_from(n).ok())
        .ok_or_else(|| KvError::command(message))
}

/// LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len].
pub fn lpos(tx: &KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let (key, element) = (arg(args, 1)?, arg(args, 2)?);
    let (mut rank, mut count, mut maxlen) = (1i64, None, 0u64);
    let mut i = 3;
    while let Some(option) = args.get(i) {
        let value = args.get(i + 1).ok_or_else(KvError::syntax)?;
        if is(option, "RANK") {
            rank = parse_i64(value)?;
            if rank == i64::MIN {
                return Err(KvError::command(
                    "ERR value is out of range, must be between -9223372036854775807 and 9223372036854775807",
                ));
            }
            if rank == 0 {
                return Err(KvError::command(
                    "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list",
                ));
            }
        } else if is(option, "COUNT") {
            count = Some(option_count(value, "ERR COUNT can't be negative")?);
        } else if is(option, "MAXLEN") {
            maxlen = option_count(value, "ERR MAXLEN can't be negative")?;
        } else {
            return Err(KvError::syntax());
        }
        i += 2;
    }
    let Some(list) = read_list(tx, db, key)? else {
        return Ok(match count {
            Some(_) => Reply::Array(Vec::new()),
            None => Reply::Null,
        });
    };
    let wanted = match count {
        None => 1,
        Some(0) => u64::MAX,
        Some(n) => n,
    };
    let mut skip = rank.unsigned_abs() - 1;
    let mut found = Vec::new();
    let limit = if maxlen == 0 { u64::MAX } else { maxlen };
    walk(tx, db, key, &list, rank < 0, limit, |offset, item| {
        if item.as_ref() == element.as_ref() {
            if skip > 0 {
                skip -= 1;
            } else {
                found.push(Reply::Integer(i64::try_from(offset).unwrap_or(i64::MAX)));
            }
        }
        (found.len() as u64) < wanted
    })?;
    Ok(match count {
        Some(_) => Reply::Array(found),
        None => found.into_iter().next().unwrap_or(Reply::Null),
    })
}

/// LINSERT key BEFORE|AFTER pivot element: the new length, -1 if the pivot is absent, 0 if
/// the key is.
pub async fn linsert(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let after = match arg(args, 2)? {
        w if is(w, "BEFORE") => false,
        w if is(w, "AFTER") => true,
        _ => return Err(KvError::syntax()),
    };
    let (pivot, element) = (arg(args, 3)?, arg(args, 4)?);
    let Some(mut list) = lock_list(tx, db, key).await? else {
        return Ok(Reply::Integer(0));
    };
    let mut at = None;
    walk(tx, db, key, &list, false, u64::MAX, |offset, item| {
        if item.as_ref() == pivot.as_ref() {
            at = Some(offset);
        }
        at.is_none()
    })?;
    let Some(pivot_at) = at else {
        return Ok(Reply::Integer(-1));
    };
    let q = pivot_at + u64::from(after);
    let len = list.len();
    if q <= len - q {
        // Move elements 0..q down by one index.
        let moved = range(tx, db, key, &list, 0, q, false)?;
        list.head = list
            .head
            .checked_sub(1)
            .ok_or_else(|| KvError::command("ERR list index space exhausted"))?;
        for (i, value) in (0u64..).zip(moved.iter()) {
            tx.put_member(&list.elem_key(db, key, list.head + i), value)
                .await?;
        }
    } else {
        // Move elements q..len up by one index.
        let moved = range(tx, db, key, &list, q, len, false)?;
        for (i, value) in (0u64..).zip(moved.iter()) {
            tx.put_member(&list.elem_key(db, key, list.head + q + 1 + i), value)
                .await?;
        }
        list.tail = list
            .tail
            .checked_add(1)
            .ok_or_else(|| KvError::command("ERR list index space exhausted"))?;
    }
    tx.put_member(&list.elem_key(db, key, list.head + q), element)
        .await?;
    save_list(tx, db, key, &list).await?;
    Ok(Reply::Integer(
        i64::try_from(list.len()).unwrap_or(i64::MAX),
    ))
}

/// LREM key count element: removes up to |count| matches from the head (count > 0), from the
/// tail (count < 0), or all (count = 0).
pub async fn lrem(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let count = parse_i64(arg(args, 2)?)?;
    let element = arg(args, 3)?;
    let Some(mut list) = lock_list(tx, db, key).await? else {
        return Ok(Reply::Integer(0));
    };
    let len = list.len();
    let items = range(tx, db, key, &list, 0, len, false)?;
    let limit = if count == 0 {
        u64::MAX
    } else {
        count.unsigned_abs()
    };
    let mut removed = vec![false; items.len()];
    let mut n = 0u64;
    let order: Box<dyn Iterator<Item = usize>> = if count < 0 {
        Box::new((0..items.len()).rev())
    } else {
        Box::new(0..items.len())
    };
    for i in order {
        if n >= limit {
            break;
        }
        if items.get(i).is_some_and(|v| v.as_ref() == element.as_ref())
            && let Some(flag) = removed.get_mut(i)
        {
            *flag = true;
            n += 1;
        }
    }
    if n == 0 {
        return Ok(Reply::Integer(0));
    }
    let first = removed.iter().position(|r| *r).unwrap_or(0) as u64;
    let last = removed.iter().rposition(|r| *r).unwrap_or(0) as u64;
    let survivors: Vec<&Bytes> = items
        .iter()
        .zip(&removed)
        .filter(|(_, r)| !**r)
        .map(|(v, _)| v)
        .collect();
    let new_len = len - n;
    if len - first <= last + 1 {
        // Keep the head: rewrite survivors from `first` on, drop the freed tail indexes.
        for i in first..new_len {
            let value = survivors.get(i as usize).ok_or_else(corrupt)?;
            tx.put_member(&list.elem_key(db, key, list.head + i), value)
                .await?;
        }
        for i in new_len..len {
            tx.delete_member(&list.elem_key(db, key, list.head + i))
                .await?;
        }
        list.tail = list.head + new_len;
    } else {
        // Keep the tail: rewrite survivors up to `last`, drop the freed head indexes.
        for i in 0..n {
            tx.delete_member(&list.elem_key(db, key, list.head + i))
                .await?;
        }
        list.head += n;
        for i in 0..(last + 1 - n) {
            let value = survivors.get(i as usize).ok_or_else(corrupt)?;
            tx.put_member(&list.elem_key(db, key, list.head + i), value)
                .await?;
        }
    }
    save_list(tx, db, key, &list).await?;
    Ok(Reply::Integer(i64::try_from(n).unwrap_or(i64::MAX)))
}

fn corrupt() -> KvError {
    KvError::Corrupt("list rewrite out of bounds".into())
}
