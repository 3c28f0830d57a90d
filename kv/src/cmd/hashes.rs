//! Hash commands. A hash is a meta record (type hash, size = field count) plus one `kv_data`
//! record per field under the meta's incarnation. Invariants: `size` equals the number of
//! member records of the live incarnation; a hash whose last field is removed is deleted; a
//! writer locks the meta and refreshes its snapshot before reading members.

use crate::args::{arg, format_float, parse_f64, parse_i64, parse_i64_opt};
use crate::cmd::generic::parse_scan_options;
use crate::error::{KvError, KvResult};
use crate::format::{KeyType, Meta, data_key};
use crate::glob::glob_match;
use crate::kv_server::KvServer;
use crate::reply::Reply;
use crate::store::KvTxn;
use bytes::Bytes;

fn read_hash(tx: &KvTxn<'_>, db: u8, key: &[u8]) -> KvResult<Option<Meta>> {
    match tx.meta(db, key)? {
        Some(m) if m.key_type != KeyType::Hash => Err(KvError::wrong_type()),
        other => Ok(other),
    }
}

/// Locks a hash key for writing; an absent key yields a new, empty hash meta.
async fn lock_hash(tx: &mut KvTxn<'_>, db: u8, key: &[u8]) -> KvResult<(Meta, bool)> {
    let existing = tx.meta_for_update(db, key).await?;
    tx.refresh();
    match existing {
        Some(m) if m.key_type != KeyType::Hash => Err(KvError::wrong_type()),
        Some(m) => Ok((m, true)),
        None => Ok((
            Meta {
                key_type: KeyType::Hash,
                expire_at_ms: 0,
                incarnation: tx.store().new_incarnation(),
                size: 0,
                inline: Vec::new(),
            },
            false,
        )),
    }
}

/// Writes back a hash meta after member changes (deletes the key when empty).
async fn store_hash(tx: &mut KvTxn<'_>, db: u8, key: &[u8], meta: &Meta) -> KvResult<()> {
    if meta.size == 0 {
        tx.delete_meta(db, key).await
    } else {
        tx.put_meta(db, key, meta).await
    }
}

fn field(tx: &KvTxn<'_>, db: u8, key: &[u8], meta: &Meta, name: &[u8]) -> KvResult<Option<Bytes>> {
    Ok(tx
        .member(&data_key(db, key, meta.incarnation, name))?
        .map(|v| Bytes::copy_from_slice(&v)))
}

/// What HSET-family commands answer.
#[derive(Debug, Clone, Copy)]
pub enum HsetReply {
    /// HSET: number of fields added.
    Added,
    /// HMSET: OK.
    Ok,
}

/// HSET / HMSET key field value [field value ...].
pub async fn hset(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes], reply: HsetReply) -> KvResult<Reply> {
    if !args.len().is_multiple_of(2) {
        return Err(KvError::arity(match reply {
            HsetReply::Added => "hset",
            HsetReply::Ok => "hmset",
        }));
    }
    let key = arg(args, 1)?;
    let (mut meta, _) = lock_hash(tx, db, key).await?;
    let mut added = 0i64;
    for pair in args.get(2..).unwrap_or_default().chunks_exact(2) {
        let (Some(f), Some(v)) = (pair.first(), pair.get(1)) else {
            continue;
        };
        let dk = data_key(db, key, meta.incarnation, f);
        if tx.member(&dk)?.is_none() {
            added += 1;
            meta.size += 1;
        }
        tx.put_member(&dk, v).await?;
    }
    store_hash(tx, db, key, &meta).await?;
    Ok(match reply {
        HsetReply::Added => Reply::Integer(added),
        HsetReply::Ok => Reply::ok(),
    })
}

/// HSETNX key field value.
pub async fn hsetnx(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let (key, f, v) = (arg(args, 1)?, arg(args, 2)?, arg(args, 3)?);
    let (mut meta, _) = lock_hash(tx, db, key).await?;
    let dk = data_key(db, key, meta.incarnation, f);
    if tx.member(&dk)?.is_some() {
        return Ok(Reply::Integer(0));
    }
    tx.put_member(&dk, v).await?;
    meta.size += 1;
    store_hash(tx, db, key, &meta).await?;
    Ok(Reply::Integer(1))
}

/// HGET key field.
pub fn hget(tx: &KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let Some(meta) = read_hash(tx, db, key)? else {
        return Ok(Reply::Null);
    };
    Ok(field(tx, db, key, &meta, arg(args, 2)?)?.map_or(Reply::Null, Reply::Bulk))
}

/// HMGET key field [field ...].
pub fn hmget(tx: &KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let meta = read_hash(tx, db, key)?;
    let mut out = Vec::new();
    for f in args.iter().skip(2) {
        out.push(match &meta {
            Some(m) => field(tx, db, key, m, f)?.map_or(Reply::Null, Reply::Bulk),
            None => Reply::Null,
        });
    }
    Ok(Reply::Array(out))
}

/// HDEL key field [field ...].
pub async fn hdel(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let (mut meta, existed) = lock_hash(tx, db, key).await?;
    if !existed {
        return Ok(Reply::Integer(0));
    }
    let mut removed = 0;
    for f in args.iter().skip(2) {
        let dk = data_key(db, key, meta.incarnation, f);
        if tx.member(&dk)?.is_some() {
            tx.delete_member(&dk).await?;
            meta.size = meta.size.saturating_sub(1);
            removed += 1;
        }
    }
    if removed > 0 {
        store_hash(tx, db, key, &meta).await?;
    }
    Ok(Reply::Integer(removed))
}

/// Which part of each field HGETALL-family commands return.
#[derive(Debug, Clone, Copy)]
pub enum HashPart {
    /// HGETALL.
    Both,
    /// HKEYS.
    Fields,
    /// HVALS.
    Values,
}

/// HGETALL / HKEYS / HVALS key.
pub fn hgetall(tx: &KvTxn<'_>, db: u8, args: &[Bytes], part: HashPart) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let members = match read_hash(tx, db, key)? {
        Some(meta) => tx.members(db, key, meta.incarnation)?,
        None => Vec::new(),
    };
    Ok(match part {
        HashPart::Both => Reply::Map(
            members
                .into_iter()
                .map(|(f, v)| (Reply::Bulk(f), Reply::Bulk(v)))
                .collect(),
        ),
        HashPart::Fields => {
            Reply::Array(members.into_iter().map(|(f, _)| Reply::Bulk(f)).collect())
        }
        HashPart::Values => {
            Reply::Array(members.into_iter().map(|(_, v)| Reply::Bulk(v)).collect())
        }
    })
}

/// HLEN key.
pub fn hlen(tx: &KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let size = read_hash(tx, db, arg(args, 1)?)?.map_or(0, |m| m.size);
    Ok(Reply::Integer(i64::try_from(size).unwrap_or(i64::MAX)))
}

/// HEXISTS key field.
pub fn hexists(tx: &KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let found = match read_hash(tx, db, key)? {
        Some(meta) => field(tx, db, key, &meta, arg(args, 2)?)?.is_some(),
        None => false,
    };
    Ok(Reply::Integer(i64::from(found)))
}

/// HSTRLEN key field.
pub fn hstrlen(tx: &KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let len = match read_hash(tx, db, key)? {
        Some(meta) => field(tx, db, key, &meta, arg(args, 2)?)?.map_or(0, |v| v.len()),
        None => 0,
    };
    Ok(Reply::Integer(i64::try_from(len).unwrap_or(i64::MAX)))
}

/// HINCRBY key field increment.
pub async fn hincrby(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let (key, f) = (arg(args, 1)?, arg(args, 2)?);
    let delta = parse_i64(arg(args, 3)?)?;
    let (mut meta, _) = lock_hash(tx, db, key).await?;
    let dk = data_key(db, key, meta.incarnation, f);
    let current = match tx.member(&dk)? {
        Some(v) => {
            parse_i64_opt(&v).ok_or_else(|| KvError::command("ERR hash value is not an integer"))?
        }
        None => {
            meta.size += 1;
            0
        }
    };
    let next = current
        .checked_add(delta)
        .ok_or_else(|| KvError::command("ERR increment or decrement would overflow"))?;
    tx.put_member(&dk, next.to_string().as_bytes()).await?;
    store_hash(tx, db, key, &meta).await?;
    Ok(Reply::Integer(next))
}

/// HINCRBYFLOAT key field increment.
pub async fn hincrbyfloat(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let (key, f) = (arg(args, 1)?, arg(args, 2)?);
    let delta = parse_f64(arg(args, 3)?)?;
    let (mut meta, _) = lock_hash(tx, db, key).await?;
    let dk = data_key(db, key, meta.incarnation, f);
    let current = match tx.member(&dk)? {
        Some(v) => parse_f64(&v).map_err(|_| KvError::command("ERR hash value is not a float"))?,
        None => {
            meta.size += 1;
            0.0
        }
    };
    let next = current + delta;
    if !next.is_finite() {
        return Err(KvError::command(
            "ERR increment would produce NaN or Infinity",
        ));
    }
    let text = format_float(next);
    tx.put_member(&dk, text.as_bytes()).await?;
    store_hash(tx, db, key, &meta).await?;
    Ok(Reply::bulk(text))
}

/// HSCAN key cursor [MATCH pattern] [COUNT count]: whole-hash pages resumed by field.
pub fn hscan(server: &KvServer, tx: &KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let key = arg(args, 1)?;
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
    let members = match read_hash(tx, db, key)? {
        Some(meta) => tx.members(db, key, meta.incarnation)?,
        None => Vec::new(),
    };
    let mut page = Vec::new();
    let mut next = 0u64;
    let from = resume.as_ref();
    let remaining = members
        .into_iter()
        .filter(|(f, _)| from.is_none_or(|r| f >= r));
    for (examined, (f, v)) in remaining.enumerate() {
        if examined >= opts.count {
            next = server.cursors.store(db, f);
            break;
        }
        if opts.pattern.as_deref().is_none_or(|p| glob_match(p, &f)) {
            page.push(Reply::Bulk(f));
            page.push(Reply::Bulk(v));
        }
    }
    Ok(Reply::Array(vec![
        Reply::bulk(next.to_string()),
        Reply::Array(page),
    ]))
}

/// Copies all members of `src` (incarnation `src_inc`) to `dst` under `dst_inc`.
pub async fn copy_members(
    tx: &mut KvTxn<'_>,
    src: (u8, &[u8]),
    src_inc: u64,
    dst: (u8, &[u8]),
    dst_inc: u64,
) -> KvResult<()> {
    tx.refresh();
    for (f, v) in tx.members(src.0, src.1, src_inc)? {
        tx.put_member(&data_key(dst.0, dst.1, dst_inc, &f), &v)
            .await?;
    }
    Ok(())
}
