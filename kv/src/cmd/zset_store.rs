//! Sorted-set algebra: ZUNION, ZINTER, ZDIFF and their STORE forms (WEIGHTS, AGGREGATE
//! SUM|MIN|MAX, WITHSCORES for the reply forms), and ZRANGESTORE. Sources may be sorted sets or sets (every set
//! member scores 1, as in Redis); a missing source is empty.
//!
//! Invariants: all arguments are parsed and every source type-checked before anything is
//! written (sources first, then options, in Redis's order); the destination and the sources
//! are locked in sorted order and read from one refreshed snapshot; the destination is
//! replaced by a fresh incarnation (an empty result deletes it). A weighted score or a SUM that is NaN (`inf` + `-inf`, `0 × inf`) becomes 0,
//! as in Redis. Sources are read whole: the cost is the sum of the input sizes.

use crate::args::{arg, is, lossy, parse_i64};
use crate::cmd::sets::size_reply;
use crate::cmd::zset_range_args::{RangeCommand, parse_range_request};
use crate::cmd::zset_ranges::range_entries;
use crate::cmd::zsets::{entries_reply, set_score};
use crate::error::{KvError, KvResult};
use crate::format::{KeyType, Meta};
use crate::reply::Reply;
use crate::score::{decode_member_value, parse_float_opt};
use crate::store::KvTxn;
use bytes::Bytes;
use std::collections::BTreeMap;

/// How scores of the same member combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Aggregate {
    Sum,
    Min,
    Max,
}

impl Aggregate {
    fn combine(self, a: f64, b: f64) -> f64 {
        match self {
            Self::Sum => {
                let s = a + b;
                if s.is_nan() { 0.0 } else { s }
            }
            Self::Min => a.min(b),
            Self::Max => a.max(b),
        }
    }
}

/// Every (member, score) of the sorted set or set at `key`; empty if absent.
fn load_source(tx: &KvTxn<'_>, db: u8, key: &[u8]) -> KvResult<Vec<(Bytes, f64)>> {
    let Some(meta) = tx.meta(db, key)? else {
        return Ok(Vec::new());
    };
    let members = tx.members(db, key, meta.incarnation)?;
    match meta.key_type {
        KeyType::Zset => members
            .into_iter()
            .map(|(m, v)| Ok((m, decode_member_value(&v)?)))
            .collect(),
        KeyType::Set => Ok(members.into_iter().map(|(m, _)| (m, 1.0)).collect()),
        _ => Err(KvError::wrong_type()),
    }
}

/// The operation of a sorted-set algebra command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZsetOp {
    /// ZUNION / ZUNIONSTORE.
    Union,
    /// ZINTER / ZINTERSTORE.
    Inter,
    /// ZDIFF / ZDIFFSTORE (scores of the first set; no WEIGHTS or AGGREGATE).
    Diff,
}

impl ZsetOp {
    fn name(self, store: bool) -> &'static str {
        match (self, store) {
            (Self::Union, false) => "zunion",
            (Self::Union, true) => "zunionstore",
            (Self::Inter, false) => "zinter",
            (Self::Inter, true) => "zinterstore",
            (Self::Diff, false) => "zdiff",
            (Self::Diff, true) => "zdiffstore",
        }
    }
}

/// Combines the weighted sources.
fn combine(
    op: ZsetOp,
    sources: Vec<Vec<(Bytes, f64)>>,
    weights: &[f64],
    aggregate: Aggregate,
) -> BTreeMap<Bytes, f64> {
    let weighted = |s: f64, w: f64| {
        let v = s * w;
        if v.is_nan() { 0.0 } else { v }
    };
    let mut result: BTreeMap<Bytes, f64> = BTreeMap::new();
    for (idx, (source, weight)) in sources.into_iter().zip(weights).enumerate() {
        let incoming: BTreeMap<Bytes, f64> = source
            .into_iter()
            .map(|(m, s)| (m, weighted(s, *weight)))
            .collect();
        match op {
            _ if idx == 0 => result = incoming,
            ZsetOp::Inter => {
                result.retain(|m, _| incoming.contains_key(m));
                for (m, acc) in &mut result {
                    if let Some(v) = incoming.get(m) {
                        *acc = aggregate.combine(*acc, *v);
                    }
                }
            }
            ZsetOp::Union => {
                for (m, v) in incoming {
                    result
                        .entry(m)
                        .and_modify(|acc| *acc = aggregate.combine(*acc, v))
                        .or_insert(v);
                }
            }
            ZsetOp::Diff => result.retain(|m, _| !incoming.contains_key(m)),
        }
    }
    result
}

/// ZUNION / ZINTER / ZDIFF numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX]
/// [WITHSCORES], and the STORE forms `destination numkeys key ...` (no WITHSCORES).
pub async fn zset_op(
    tx: &mut KvTxn<'_>,
    db: u8,
    args: &[Bytes],
    op: ZsetOp,
    store: bool,
) -> KvResult<Reply> {
    let numkeys_at = if store { 2 } else { 1 };
    let dest = if store { Some(arg(args, 1)?) } else { None };
    let numkeys = parse_i64(arg(args, numkeys_at)?)?;
    if numkeys < 1 {
        return Err(KvError::command(format!(
            "ERR at least 1 input key is needed for '{}' command",
            op.name(store)
        )));
    }
    let n = usize::try_from(numkeys).unwrap_or(usize::MAX);
    let keys_end = n
        .checked_add(numkeys_at + 1)
        .filter(|&end| end <= args.len())
        .ok_or_else(KvError::syntax)?;
    let keys: Vec<&[u8]> = args
        .get(numkeys_at + 1..keys_end)
        .unwrap_or_default()
        .iter()
        .map(Bytes::as_ref)
        .collect();
    let mut all = keys.clone();
    all.extend(dest.map(Bytes::as_ref));
    tx.lock_keys_for_read(db, &all).await?;
    tx.refresh();
    for key in &keys {
        if let Some(meta) = tx.meta(db, key)?
            && !matches!(meta.key_type, KeyType::Zset | KeyType::Set)
        {
            return Err(KvError::wrong_type());
        }
    }
    let mut weights = vec![1.0f64; keys.len()];
    let (mut aggregate, mut withscores) = (Aggregate::Sum, false);
    let mut i = keys_end;
    while let Some(option) = args.get(i) {
        let remaining = args.len() - i - 1;
        if op != ZsetOp::Diff && remaining >= n && is(option, "WEIGHTS") {
            for (j, weight) in weights.iter_mut().enumerate() {
                *weight = parse_float_opt(arg(args, i + 1 + j)?)
                    .ok_or_else(|| KvError::command("ERR weight value is not a float"))?;
            }
            i += n + 1;
        } else if op != ZsetOp::Diff && remaining >= 1 && is(option, "AGGREGATE") {
            let value = arg(args, i + 1)?;
            aggregate = match lossy(value).to_ascii_uppercase().as_str() {
                "SUM" => Aggregate::Sum,
                "MIN" => Aggregate::Min,
                "MAX" => Aggregate::Max,
                _ => return Err(KvError::syntax()),
            };
            i += 2;
        } else if !store && is(option, "WITHSCORES") {
            withscores = true;
            i += 1;
        } else {
            return Err(KvError::syntax());
        }
    }
    let mut sources = Vec::new();
    for key in &keys {
        sources.push(load_source(tx, db, key)?);
    }
    let result = combine(op, sources, &weights, aggregate);
    let Some(dest) = dest else {
        let mut entries: Vec<(Bytes, f64)> = result.into_iter().collect();
        entries.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
        return Ok(entries_reply(entries, withscores, true));
    };
    let existing = tx.meta_for_update(db, dest).await?;
    if result.is_empty() {
        if existing.is_some() {
            tx.delete_meta(db, dest).await?;
        }
        return Ok(Reply::Integer(0));
    }
    let mut meta = Meta::collection(KeyType::Zset, tx.store().new_incarnation());
    for (member, score) in &result {
        set_score(tx, (db, dest), &mut meta, member, None, *score).await?;
    }
    meta.size = result.len() as u64;
    tx.put_meta(db, dest, &meta).await?;
    Ok(size_reply(meta.size))
}

/// ZRANGESTORE dst src min max [BYSCORE | BYLEX] [REV] [LIMIT offset count]: stores the
/// selected entries (with their scores) in `dst`; a missing source or an empty selection
/// deletes `dst`.
pub async fn zrangestore(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let (dest, src) = (arg(args, 1)?, arg(args, 2)?);
    let req = parse_range_request(args, 3, RangeCommand::Zrangestore)?;
    tx.lock_keys_for_read(db, &[dest, src]).await?;
    tx.refresh();
    let entries = range_entries(tx, db, src, &req)?.unwrap_or_default();
    let existing = tx.meta_for_update(db, dest).await?;
    if entries.is_empty() {
        if existing.is_some() {
            tx.delete_meta(db, dest).await?;
        }
        return Ok(Reply::Integer(0));
    }
    let mut meta = Meta::collection(KeyType::Zset, tx.store().new_incarnation());
    for (member, score) in &entries {
        set_score(tx, (db, dest), &mut meta, member, None, *score).await?;
    }
    meta.size = entries.len() as u64;
    tx.put_meta(db, dest, &meta).await?;
    Ok(size_reply(meta.size))
}
