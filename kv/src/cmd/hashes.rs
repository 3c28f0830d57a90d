//! Hash commands. A hash is a meta record (type hash, size = field count) plus one `kv_data`
//! record per field under the meta's incarnation. Invariants: `size` equals the number of
//! member records of the live incarnation; a hash whose last field is removed is deleted; a
//! writer locks the meta and refreshes its snapshot before reading members.
//!
//! Fields may carry their own expiry (HEXPIRE, `hash_ttl.rs`; value formats in
//! `hash_fields.rs`): expired fields are invisible to every read here, and a writer purges
//! them (under the key lock) before it changes anything, so `size` counts live fields again.

use crate::args::{arg, format_float, parse_f64, parse_i64, parse_i64_opt};
use crate::cmd::generic::{parse_scan_cursor, parse_scan_options};
use crate::error::{KvError, KvResult};
use crate::format::{KeyType, Meta, data_key};
use crate::glob::glob_match;
use crate::hash_fields::{TtlHeader, decode_value, encode_value, header, set_header};
use crate::kv_server::KvServer;
use crate::reply::Reply;
use crate::store::KvTxn;
use bytes::Bytes;

pub(crate) fn read_hash(tx: &KvTxn<'_>, db: u8, key: &[u8]) -> KvResult<Option<Meta>> {
    match tx.meta(db, key)? {
        Some(m) if m.key_type != KeyType::Hash => Err(KvError::wrong_type()),
        other => Ok(other),
    }
}

/// Deletes the expired fields of a hash whose header says some may have expired, and
/// recomputes `size` and the header exactly. Returns true if it changed `meta` (the caller
/// must store it, or delete the key when `size` is 0). O(fields), only when needed.
pub(crate) async fn purge_expired_fields(
    tx: &mut KvTxn<'_>,
    db: u8,
    key: &[u8],
    meta: &mut Meta,
) -> KvResult<bool> {
    let now = tx.now_ms();
    match header(meta)? {
        Some(h) if h.may_have_expired(now) => {}
        _ => return Ok(false),
    }
    let mut fresh = TtlHeader::default();
    for (f, raw) in tx.members(db, key, meta.incarnation)? {
        let value = decode_value(true, &raw)?;
        if value.is_expired(now) {
            tx.delete_member(&data_key(db, key, meta.incarnation, &f))
                .await?;
            meta.size = meta.size.saturating_sub(1);
        } else if value.expire_at_ms != 0 {
            fresh.add(value.expire_at_ms);
        }
    }
    set_header(meta, fresh);
    Ok(true)
}

/// Locks a hash key for writing, purging expired fields; an absent (or fully expired) key
/// yields a new, empty hash meta.
pub(crate) async fn lock_hash(tx: &mut KvTxn<'_>, db: u8, key: &[u8]) -> KvResult<(Meta, bool)> {
    let existing = tx.meta_for_update(db, key).await?;
    tx.refresh();
    match existing {
        Some(m) if m.key_type != KeyType::Hash => Err(KvError::wrong_type()),
        Some(mut m) => {
            if purge_expired_fields(tx, db, key, &mut m).await? {
                store_hash(tx, db, key, &m).await?;
            }
            if m.size == 0 {
                return Ok((new_hash_meta(tx), false));
            }
            Ok((m, true))
        }
        None => Ok((new_hash_meta(tx), false)),
    }
}

fn new_hash_meta(tx: &KvTxn<'_>) -> Meta {
    Meta {
        key_type: KeyType::Hash,
        expire_at_ms: 0,
        incarnation: tx.store().new_incarnation(),
        size: 0,
        inline: Vec::new(),
    }
}

/// Writes back a hash meta after member changes (deletes the key when empty).
pub(crate) async fn store_hash(
    tx: &mut KvTxn<'_>,
    db: u8,
    key: &[u8],
    meta: &Meta,
) -> KvResult<()> {
    if meta.size == 0 {
        tx.delete_meta(db, key).await
    } else {
        tx.put_meta(db, key, meta).await
    }
}

fn field(tx: &KvTxn<'_>, db: u8, key: &[u8], meta: &Meta, name: &[u8]) -> KvResult<Option<Bytes>> {
    let Some(raw) = tx.member(&data_key(db, key, meta.incarnation, name))? else {
        return Ok(None);
    };
    let value = decode_value(header(meta)?.is_some(), &raw)?;
    Ok((!value.is_expired(tx.now_ms())).then_some(value.value))
}

/// The live (field, value) pairs of a hash, in field order (expired fields left out).
pub(crate) fn live_members(
    tx: &KvTxn<'_>,
    db: u8,
    key: &[u8],
    meta: &Meta,
) -> KvResult<Vec<(Bytes, Bytes)>> {
    let members = tx.members(db, key, meta.incarnation)?;
    if header(meta)?.is_none() {
        return Ok(members);
    }
    let now = tx.now_ms();
    let mut out = Vec::with_capacity(members.len());
    for (f, raw) in members {
        let value = decode_value(true, &raw)?;
        if !value.is_expired(now) {
            out.push((f, value.value));
        }
    }
    Ok(out)
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
    let ttl_header = header(&meta)?;
    let mut h = ttl_header.unwrap_or_default();
    let mut added = 0i64;
    for pair in args.get(2..).unwrap_or_default().chunks_exact(2) {
        let (Some(f), Some(v)) = (pair.first(), pair.get(1)) else {
            continue;
        };
        let dk = data_key(db, key, meta.incarnation, f);
        match tx.member(&dk)? {
            None => {
                added += 1;
                meta.size += 1;
            }
            // HSET drops the field's TTL.
            Some(raw) if ttl_header.is_some() => {
                if decode_value(true, &raw)?.expire_at_ms != 0 {
                    h.remove();
                }
            }
            Some(_) => {}
        }
        tx.put_member(&dk, &encode_value(ttl_header.is_some(), 0, v))
            .await?;
    }
    if ttl_header.is_some() {
        set_header(&mut meta, h);
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
    let v2 = header(&meta)?.is_some();
    tx.put_member(&dk, &encode_value(v2, 0, v)).await?;
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
    let ttl_header = header(&meta)?;
    let mut h = ttl_header.unwrap_or_default();
    let mut removed = 0;
    for f in args.iter().skip(2) {
        let dk = data_key(db, key, meta.incarnation, f);
        if let Some(raw) = tx.member(&dk)? {
            if ttl_header.is_some() && decode_value(true, &raw)?.expire_at_ms != 0 {
                h.remove();
            }
            tx.delete_member(&dk).await?;
            meta.size = meta.size.saturating_sub(1);
            removed += 1;
        }
    }
    if ttl_header.is_some() {
        set_header(&mut meta, h);
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
        Some(meta) => live_members(tx, db, key, &meta)?,
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
    let key = arg(args, 1)?;
    let size = match read_hash(tx, db, key)? {
        None => 0,
        // Some field may have expired and not been purged yet: count the live ones.
        Some(m) if header(&m)?.is_some_and(|h| h.may_have_expired(tx.now_ms())) => {
            live_members(tx, db, key, &m)?.len() as u64
        }
        Some(m) => m.size,
    };
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
    let v2 = header(&meta)?.is_some();
    let (current, expire_at) = match tx.member(&dk)? {
        Some(raw) => {
            let v = decode_value(v2, &raw)?;
            let n = parse_i64_opt(&v.value)
                .ok_or_else(|| KvError::command("ERR hash value is not an integer"))?;
            (n, v.expire_at_ms)
        }
        None => {
            meta.size += 1;
            (0, 0)
        }
    };
    let next = current
        .checked_add(delta)
        .ok_or_else(|| KvError::command("ERR increment or decrement would overflow"))?;
    // HINCRBY keeps the field's TTL.
    tx.put_member(
        &dk,
        &encode_value(v2, expire_at, next.to_string().as_bytes()),
    )
    .await?;
    store_hash(tx, db, key, &meta).await?;
    Ok(Reply::Integer(next))
}

/// HINCRBYFLOAT key field increment.
pub async fn hincrbyfloat(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let (key, f) = (arg(args, 1)?, arg(args, 2)?);
    let delta = parse_f64(arg(args, 3)?)?;
    if !delta.is_finite() {
        return Err(KvError::command("ERR value is NaN or Infinity"));
    }
    let (mut meta, _) = lock_hash(tx, db, key).await?;
    let dk = data_key(db, key, meta.incarnation, f);
    let v2 = header(&meta)?.is_some();
    let (current, expire_at) = match tx.member(&dk)? {
        Some(raw) => {
            let v = decode_value(v2, &raw)?;
            let n = parse_f64(&v.value)
                .map_err(|_| KvError::command("ERR hash value is not a float"))?;
            (n, v.expire_at_ms)
        }
        None => {
            meta.size += 1;
            (0.0, 0)
        }
    };
    let next = current + delta;
    if !next.is_finite() {
        return Err(KvError::command(
            "ERR increment would produce NaN or Infinity",
        ));
    }
    let text = format_float(next);
    tx.put_member(&dk, &encode_value(v2, expire_at, text.as_bytes()))
        .await?;
    store_hash(tx, db, key, &meta).await?;
    Ok(Reply::bulk(text))
}

/// HSCAN key cursor [MATCH pattern] [COUNT count]: whole-hash pages resumed by field.
pub fn hscan(server: &KvServer, tx: &KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    // As Redis: the cursor, then the key (missing: an empty scan; wrong type), then the options.
    parse_scan_cursor(arg(args, 2)?)?;
    let Some(meta) = read_hash(tx, db, key)? else {
        return Ok(Reply::Array(vec![Reply::bulk("0"), Reply::Array(vec![])]));
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
    let members = live_members(tx, db, key, &meta)?;
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
