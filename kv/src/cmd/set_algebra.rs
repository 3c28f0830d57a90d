//! Multi-key set commands: SMOVE, SINTER / SUNION / SDIFF, their STORE forms, SINTERCARD.
//!
//! Invariants: every source key is type-checked (WRONGTYPE) before anything is written; a
//! missing key is an empty set; STORE forms lock the destination and all sources in sorted
//! order, compute the result from one refreshed snapshot, and replace the destination with a
//! fresh incarnation (an empty result deletes it). Intersections walk the smallest set and
//! probe the others with point reads, so their cost follows the smallest input.

use crate::args::{arg, is, parse_i64_opt};
use crate::cmd::sets::{is_member, read_typed, size_reply, store_collection};
use crate::error::{KvError, KvResult};
use crate::format::{KeyType, Meta, data_key};
use crate::reply::Reply;
use crate::store::KvTxn;
use bytes::Bytes;
use std::collections::BTreeSet;

/// The set operation of SINTER / SUNION / SDIFF and their STORE forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetOp {
    /// Members in every set.
    Inter,
    /// Members in any set.
    Union,
    /// Members of the first set in none of the others.
    Diff,
}

/// Computes `op` over the sets at `keys` (at most `limit` members for intersections).
fn compute(
    tx: &KvTxn<'_>,
    db: u8,
    keys: &[&[u8]],
    op: SetOp,
    limit: Option<usize>,
) -> KvResult<Vec<Bytes>> {
    let mut sets: Vec<(&[u8], Option<Meta>)> = Vec::new();
    for key in keys {
        sets.push((key, read_typed(tx, db, key, KeyType::Set)?));
    }
    match op {
        SetOp::Inter => {
            let mut present = Vec::new();
            for (key, meta) in &sets {
                match meta {
                    Some(m) => present.push((*key, m)),
                    None => return Ok(Vec::new()),
                }
            }
            present.sort_by_key(|(_, m)| m.size);
            let Some(((first_key, first), rest)) = present.split_first() else {
                return Ok(Vec::new());
            };
            let mut out = Vec::new();
            for (member, _) in tx.members(db, first_key, first.incarnation)? {
                if limit.is_some_and(|l| out.len() >= l) {
                    break;
                }
                let mut everywhere = true;
                for (key, meta) in rest {
                    if !is_member(tx, db, key, meta, &member)? {
                        everywhere = false;
                        break;
                    }
                }
                if everywhere {
                    out.push(member);
                }
            }
            Ok(out)
        }
        SetOp::Union => {
            let mut all = BTreeSet::new();
            for (key, meta) in &sets {
                if let Some(m) = meta {
                    all.extend(tx.members(db, key, m.incarnation)?.into_iter().map(|p| p.0));
                }
            }
            Ok(all.into_iter().collect())
        }
        SetOp::Diff => {
            let Some(((first_key, Some(first)), rest)) = sets.split_first() else {
                return Ok(Vec::new());
            };
            let mut out = Vec::new();
            for (member, _) in tx.members(db, first_key, first.incarnation)? {
                let mut elsewhere = false;
                for (key, meta) in rest {
                    if let Some(m) = meta
                        && is_member(tx, db, key, m, &member)?
                    {
                        elsewhere = true;
                        break;
                    }
                }
                if !elsewhere {
                    out.push(member);
                }
            }
            Ok(out)
        }
    }
}

/// SINTER / SUNION / SDIFF key [key ...].
pub fn set_op(tx: &KvTxn<'_>, db: u8, args: &[Bytes], op: SetOp) -> KvResult<Reply> {
    let keys: Vec<&[u8]> = args.iter().skip(1).map(Bytes::as_ref).collect();
    let members = compute(tx, db, &keys, op, None)?;
    Ok(Reply::Set(members.into_iter().map(Reply::Bulk).collect()))
}

/// Replaces `key` (any type) with a new set of `members`; an empty set deletes the key.
/// The caller holds the key's lock. Returns the new size.
pub async fn replace_with_set(
    tx: &mut KvTxn<'_>,
    db: u8,
    key: &[u8],
    members: &[Bytes],
) -> KvResult<u64> {
    let existing = tx.meta_for_update(db, key).await?;
    if members.is_empty() {
        if existing.is_some() {
            tx.delete_meta(db, key).await?;
        }
        return Ok(0);
    }
    let mut meta = Meta::collection(KeyType::Set, tx.store().new_incarnation());
    for member in members {
        tx.put_member(&data_key(db, key, meta.incarnation, member), b"")
            .await?;
    }
    meta.size = members.len() as u64;
    tx.put_meta(db, key, &meta).await?;
    Ok(meta.size)
}

/// SINTERSTORE / SUNIONSTORE / SDIFFSTORE destination key [key ...].
pub async fn set_op_store(
    tx: &mut KvTxn<'_>,
    db: u8,
    args: &[Bytes],
    op: SetOp,
) -> KvResult<Reply> {
    let dest = arg(args, 1)?;
    let sources: Vec<&[u8]> = args.iter().skip(2).map(Bytes::as_ref).collect();
    let mut all = sources.clone();
    all.push(dest);
    tx.lock_keys_for_read(db, &all).await?;
    tx.refresh();
    let members = compute(tx, db, &sources, op, None)?;
    let size = replace_with_set(tx, db, dest, &members).await?;
    Ok(size_reply(size))
}

/// SINTERCARD numkeys key [key ...] [LIMIT limit].
pub fn sintercard(tx: &KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    // Redis gives these range errors for non-integers too.
    let numkeys = parse_i64_opt(arg(args, 1)?)
        .filter(|&n| n >= 1)
        .ok_or_else(|| KvError::command("ERR numkeys should be greater than 0"))?;
    let numkeys = usize::try_from(numkeys).unwrap_or(usize::MAX);
    let first_option = numkeys
        .checked_add(2)
        .filter(|&end| end <= args.len())
        .ok_or_else(|| {
            KvError::command("ERR Number of keys can't be greater than number of args")
        })?;
    let keys: Vec<&[u8]> = args
        .get(2..first_option)
        .unwrap_or_default()
        .iter()
        .map(Bytes::as_ref)
        .collect();
    let mut limit = 0usize;
    let mut i = first_option;
    while let Some(option) = args.get(i) {
        match args.get(i + 1) {
            Some(value) if is(option, "LIMIT") => {
                let n = parse_i64_opt(value)
                    .and_then(|n| u64::try_from(n).ok())
                    .ok_or_else(|| KvError::command("ERR LIMIT can't be negative"))?;
                limit = usize::try_from(n).unwrap_or(usize::MAX);
                i += 2;
            }
            _ => return Err(KvError::syntax()),
        }
    }
    let members = compute(tx, db, &keys, SetOp::Inter, (limit > 0).then_some(limit))?;
    Ok(size_reply(members.len() as u64))
}

/// SMOVE source destination member.
pub async fn smove(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let (src, dst, member) = (arg(args, 1)?, arg(args, 2)?, arg(args, 3)?);
    tx.lock_keys_for_read(db, &[src, dst]).await?;
    tx.refresh();
    let Some(mut src_meta) = tx.meta(db, src)? else {
        return Ok(Reply::Integer(0));
    };
    if src_meta.key_type != KeyType::Set {
        return Err(KvError::wrong_type());
    }
    read_typed(tx, db, dst, KeyType::Set)?;
    let in_src = is_member(tx, db, src, &src_meta, member)?;
    if src == dst || !in_src {
        return Ok(Reply::Integer(i64::from(in_src && src == dst)));
    }
    tx.delete_member(&data_key(db, src, src_meta.incarnation, member))
        .await?;
    src_meta.size = src_meta.size.saturating_sub(1);
    store_collection(tx, db, src, &src_meta).await?;
    let mut dst_meta = match read_typed(tx, db, dst, KeyType::Set)? {
        Some(meta) => meta,
        None => Meta::collection(KeyType::Set, tx.store().new_incarnation()),
    };
    if !is_member(tx, db, dst, &dst_meta, member)? {
        tx.put_member(&data_key(db, dst, dst_meta.incarnation, member), b"")
            .await?;
        dst_meta.size += 1;
        tx.put_meta(db, dst, &dst_meta).await?;
    }
    Ok(Reply::Integer(1))
}
