//! String commands. A string lives inline in its meta record (FORMAT.md), so every string
//! command is one meta read and at most one meta write. Writes keep the key's TTL unless the
//! command says otherwise (SET without KEEPTTL, GETSET, MSET clear it, as in Redis).

use crate::args::{arg, format_float, is, parse_f64, parse_i64, parse_i64_opt};
use crate::error::{KvError, KvResult};
use crate::format::{KeyType, Meta};
use crate::kv_server::{KvServer, Stats};
use crate::reply::{Reply, StoredBulk};
use crate::store::KvTxn;
use bytes::Bytes;

const TOO_BIG: &str = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";

/// The key's string meta, `None` if absent; WRONGTYPE for other types.
pub fn read_string(tx: &KvTxn<'_>, db: u8, key: &[u8]) -> KvResult<Option<Meta>> {
    match tx.meta(db, key)? {
        Some(m) if m.key_type != KeyType::String => Err(KvError::wrong_type()),
        other => Ok(other),
    }
}

/// Locks the key and returns its string meta (see [`read_string`]).
pub async fn lock_string(tx: &mut KvTxn<'_>, db: u8, key: &[u8]) -> KvResult<Option<Meta>> {
    match tx.meta_for_update(db, key).await? {
        Some(m) if m.key_type != KeyType::String => Err(KvError::wrong_type()),
        other => Ok(other),
    }
}

/// Writes a string (a fresh incarnation; caller holds the lock). `expire_at_ms` ≤ now and
/// non-zero means the key is already expired: it is deleted instead.
pub async fn write_string(
    tx: &mut KvTxn<'_>,
    db: u8,
    key: &[u8],
    value: &[u8],
    expire_at_ms: u64,
) -> KvResult<()> {
    if expire_at_ms != 0 && expire_at_ms <= tx.now_ms() {
        return tx.delete_meta(db, key).await;
    }
    let incarnation = tx.store().new_incarnation();
    let stored = Meta::stored_string(value, expire_at_ms, incarnation);
    tx.put_stored_meta(db, key, stored).await
}

/// SET key value, without options, when the key's lock is free: the common SET runs
/// without a future. `None`: run [`set`] (options, or a lock to wait for).
pub fn try_plain_set(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes]) -> Option<KvResult<Reply>> {
    let [_, key, value] = args else {
        return None;
    };
    let stored = Meta::stored_string(value, 0, tx.store().new_incarnation());
    match tx.try_put_stored_meta(db, key, &stored) {
        Ok(true) => Some(Ok(Reply::ok())),
        Ok(false) => None,
        Err(e) => Some(Err(e)),
    }
}

/// GET key.
pub fn get(server: &KvServer, tx: &KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    get_reply(server, tx.meta_with_record(db, arg(args, 1)?)?)
}

/// GET key outside MULTI: its one read is of the latest committed record (no transaction).
pub fn get_latest(server: &KvServer, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    get_reply(
        server,
        server
            .store()
            .latest_meta_with_record(db, arg(args, 1)?, crate::clock::now_ms)?,
    )
}

fn get_reply(server: &KvServer, found: Option<(Meta, orcinus_storage::Slice)>) -> KvResult<Reply> {
    Stats::bump(if found.is_some() {
        &server.stats.keyspace_hits
    } else {
        &server.stats.keyspace_misses
    });
    match found {
        None => Ok(Reply::Null),
        Some((meta, _)) if meta.key_type != KeyType::String => Err(KvError::wrong_type()),
        // The reply shares the stored record's buffer: no copy of the value, no allocation.
        Some((_, record)) => Ok(Reply::Stored(StoredBulk::new(record, Meta::INLINE_OFFSET))),
    }
}

/// How a SET-family command sets the expiry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpiryOption {
    /// Clear any TTL.
    None,
    /// Keep the existing TTL.
    Keep,
    /// Absolute Unix ms.
    At(u64),
    /// Remove the TTL (GETEX PERSIST).
    Persist,
}

/// Converts an EX/PX/EXAT/PXAT argument to absolute ms; `command` names the error.
pub fn expire_at(
    now_ms: u64,
    raw: &[u8],
    unit_ms: i64,
    absolute: bool,
    command: &str,
) -> KvResult<u64> {
    let n = parse_i64(raw)?;
    let invalid = || KvError::command(format!("ERR invalid expire time in '{command}' command"));
    if n <= 0 {
        return Err(invalid());
    }
    let ms = n.checked_mul(unit_ms).ok_or_else(invalid)?;
    let ms = u64::try_from(ms).map_err(|_| invalid())?;
    if absolute {
        Ok(ms)
    } else {
        now_ms
            .checked_add(ms)
            .filter(|&v| v < i64::MAX as u64)
            .ok_or_else(invalid)
    }
}

/// An `EX|PX|EXAT|PXAT value` option whose value is not checked yet: (ms per unit, absolute,
/// the value argument).
type RawExpiry<'a> = (i64, bool, &'a Bytes);

/// Reads the expiry option at `args[i]` without checking its value (a missing value is a
/// syntax error); `None` if `args[i]` is not one.
fn raw_expiry_option(args: &[Bytes], i: usize) -> KvResult<Option<RawExpiry<'_>>> {
    let option = arg(args, i)?;
    let unit = [
        ("EX", 1000, false),
        ("PX", 1, false),
        ("EXAT", 1000, true),
        ("PXAT", 1, true),
    ]
    .into_iter()
    .find(|(name, _, _)| is(option, name));
    match unit {
        Some((_, unit_ms, absolute)) => {
            let value = args.get(i + 1).ok_or_else(KvError::syntax)?;
            Ok(Some((unit_ms, absolute, value)))
        }
        None => Ok(None),
    }
}

/// Parses one expiry option at `args[i]`; returns it and how many arguments it used.
pub fn parse_expiry_option(
    now_ms: u64,
    args: &[Bytes],
    i: usize,
    command: &str,
) -> KvResult<Option<(ExpiryOption, usize)>> {
    match raw_expiry_option(args, i)? {
        Some((unit_ms, absolute, value)) => {
            let at = expire_at(now_ms, value, unit_ms, absolute, command)?;
            Ok(Some((ExpiryOption::At(at), 2)))
        }
        None => Ok(None),
    }
}

/// SET key value [NX|XX] [GET] [EX s|PX ms|EXAT ts|PXAT ts|KEEPTTL].
pub async fn set(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let (key, value) = (arg(args, 1)?, arg(args, 2)?);
    let (mut nx, mut xx, mut get) = (false, false, false);
    let mut expiry: Option<ExpiryOption> = None;
    let mut i = 3;
    while let Some(option) = args.get(i) {
        if is(option, "NX") && !xx {
            nx = true;
            i += 1;
        } else if is(option, "XX") && !nx {
            xx = true;
            i += 1;
        } else if is(option, "GET") {
            get = true;
            i += 1;
        } else if is(option, "KEEPTTL") && expiry.is_none() {
            expiry = Some(ExpiryOption::Keep);
            i += 1;
        } else if expiry.is_none() {
            match parse_expiry_option(tx.now_ms(), args, i, "set")? {
                Some((e, used)) => {
                    expiry = Some(e);
                    i += used;
                }
                None => return Err(KvError::syntax()),
            }
        } else {
            return Err(KvError::syntax());
        }
    }
    if !(get || nx || xx || matches!(expiry, Some(ExpiryOption::Keep))) {
        // Nothing depends on the old record: replace it without reading it (the write
        // takes the key's lock).
        let expire_at = match expiry {
            Some(ExpiryOption::At(at)) => at,
            _ => 0,
        };
        write_string(tx, db, key, value, expire_at).await?;
        return Ok(Reply::ok());
    }
    // Without GET the old value is not needed: read its header only.
    let old = if get {
        tx.meta_for_update(db, key).await?
    } else {
        tx.meta_header_for_update(db, key).await?
    };
    let old = match old {
        Some(m) if get && m.key_type != KeyType::String => return Err(KvError::wrong_type()),
        other => other,
    };
    let old_reply = || {
        old.as_ref().map_or(Reply::Null, |m| {
            Reply::Bulk(Bytes::copy_from_slice(&m.inline))
        })
    };
    if (nx && old.is_some()) || (xx && old.is_none()) {
        return Ok(if get { old_reply() } else { Reply::Null });
    }
    let expire_at = match expiry.unwrap_or(ExpiryOption::None) {
        ExpiryOption::None | ExpiryOption::Persist => 0,
        ExpiryOption::Keep => old.as_ref().map_or(0, |m| m.expire_at_ms),
        ExpiryOption::At(at) => at,
    };
    write_string(tx, db, key, value, expire_at).await?;
    Ok(if get { old_reply() } else { Reply::ok() })
}

/// SETNX key value.
pub async fn setnx(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let (key, value) = (arg(args, 1)?, arg(args, 2)?);
    if tx.meta_for_update(db, key).await?.is_some() {
        return Ok(Reply::Integer(0));
    }
    write_string(tx, db, key, value, 0).await?;
    Ok(Reply::Integer(1))
}

/// SETEX key seconds value / PSETEX key ms value.
pub async fn setex(
    tx: &mut KvTxn<'_>,
    db: u8,
    args: &[Bytes],
    unit_ms: i64,
    command: &str,
) -> KvResult<Reply> {
    let (key, ttl, value) = (arg(args, 1)?, arg(args, 2)?, arg(args, 3)?);
    let at = expire_at(tx.now_ms(), ttl, unit_ms, false, command)?;
    tx.meta_for_update(db, key).await?;
    write_string(tx, db, key, value, at).await?;
    Ok(Reply::ok())
}

/// GETSET key value.
pub async fn getset(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let (key, value) = (arg(args, 1)?, arg(args, 2)?);
    let old = lock_string(tx, db, key).await?;
    write_string(tx, db, key, value, 0).await?;
    Ok(old.map_or(Reply::Null, |m| Reply::Bulk(Bytes::from(m.inline))))
}

/// GETDEL key.
pub async fn getdel(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let Some(old) = lock_string(tx, db, key).await? else {
        return Ok(Reply::Null);
    };
    tx.delete_meta(db, key).await?;
    Ok(Reply::Bulk(Bytes::from(old.inline)))
}

/// GETEX key [EX s|PX ms|EXAT ts|PXAT ts|PERSIST].
pub async fn getex(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    // As Redis: the options' syntax first, then the key (missing: nil; wrong type), and only
    // then the expiry value.
    let mut persist = false;
    let mut raw: Option<RawExpiry<'_>> = None;
    let mut i = 2;
    while args.get(i).is_some() {
        if persist || raw.is_some() {
            return Err(KvError::syntax());
        }
        if args.get(i).is_some_and(|a| is(a, "PERSIST")) {
            persist = true;
            i += 1;
        } else {
            raw = Some(raw_expiry_option(args, i)?.ok_or_else(KvError::syntax)?);
            i += 2;
        }
    }
    let Some(mut meta) = lock_string(tx, db, key).await? else {
        return Ok(Reply::Null);
    };
    let expiry = match raw {
        Some((unit_ms, absolute, value)) => Some(ExpiryOption::At(expire_at(
            tx.now_ms(),
            value,
            unit_ms,
            absolute,
            "getex",
        )?)),
        None if persist => Some(ExpiryOption::Persist),
        None => None,
    };
    let value = Bytes::copy_from_slice(&meta.inline);
    match expiry {
        None => {}
        Some(ExpiryOption::Persist) if meta.expire_at_ms != 0 => {
            meta.expire_at_ms = 0;
            tx.put_meta(db, key, &meta).await?;
        }
        Some(ExpiryOption::At(at)) if at <= tx.now_ms() => tx.delete_meta(db, key).await?,
        Some(ExpiryOption::At(at)) => {
            meta.expire_at_ms = at;
            tx.put_meta(db, key, &meta).await?;
        }
        Some(_) => {}
    }
    Ok(Reply::Bulk(value))
}

/// MGET key [key ...]: non-strings read as nil.
pub fn mget(tx: &KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let mut out = Vec::with_capacity(args.len().saturating_sub(1));
    for key in args.iter().skip(1) {
        out.push(match tx.meta(db, key)? {
            Some(m) if m.key_type == KeyType::String => Reply::Bulk(Bytes::from(m.inline)),
            _ => Reply::Null,
        });
    }
    Ok(Reply::Array(out))
}

/// MSET / MSETNX key value [key value ...].
pub async fn mset(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes], only_new: bool) -> KvResult<Reply> {
    if args.len().is_multiple_of(2) {
        return Err(KvError::arity(if only_new { "msetnx" } else { "mset" }));
    }
    let pairs: Vec<(&Bytes, &Bytes)> = args
        .get(1..)
        .unwrap_or_default()
        .chunks_exact(2)
        .filter_map(|p| Some((p.first()?, p.get(1)?)))
        .collect();
    let keys: Vec<&[u8]> = pairs.iter().map(|(k, _)| k.as_ref()).collect();
    tx.lock_keys(db, &keys).await?;
    if only_new {
        for key in &keys {
            if tx.meta_for_update(db, key).await?.is_some() {
                return Ok(Reply::Integer(0));
            }
        }
    }
    for (key, value) in pairs {
        write_string(tx, db, key, value, 0).await?;
    }
    Ok(if only_new {
        Reply::Integer(1)
    } else {
        Reply::ok()
    })
}

/// APPEND key value.
pub async fn append(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes], max_len: u64) -> KvResult<Reply> {
    let (key, value) = (arg(args, 1)?, arg(args, 2)?);
    let (mut current, expire) = match lock_string(tx, db, key).await? {
        Some(m) => (m.inline, m.expire_at_ms),
        None => (Vec::new(), 0),
    };
    if (current.len() + value.len()) as u64 > max_len {
        return Err(KvError::command(TOO_BIG));
    }
    current.extend_from_slice(value);
    let len = current.len();
    write_string(tx, db, key, &current, expire).await?;
    Ok(Reply::Integer(i64::try_from(len).unwrap_or(i64::MAX)))
}

/// STRLEN key.
pub fn strlen(tx: &KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let len = read_string(tx, db, arg(args, 1)?)?.map_or(0, |m| m.inline.len());
    Ok(Reply::Integer(i64::try_from(len).unwrap_or(i64::MAX)))
}

/// Resolves Redis start/end indexes (negative from the end) to a byte range, or `None`.
#[must_use]
pub fn resolve_range(len: usize, start: i64, end: i64) -> Option<(usize, usize)> {
    let len = i64::try_from(len).ok()?;
    if len == 0 || (start < 0 && end < 0 && start > end) {
        return None;
    }
    let start = if start < 0 {
        (len + start).max(0)
    } else {
        start
    };
    let end = if end < 0 {
        (len + end).max(0)
    } else {
        end.min(len - 1)
    };
    if start > end || start >= len {
        return None;
    }
    Some((usize::try_from(start).ok()?, usize::try_from(end).ok()?))
}

/// GETRANGE key start end.
pub fn getrange(tx: &KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let (start, end) = (parse_i64(arg(args, 2)?)?, parse_i64(arg(args, 3)?)?);
    let value = read_string(tx, db, key)?
        .map(|m| m.inline)
        .unwrap_or_default();
    let slice = resolve_range(value.len(), start, end)
        .and_then(|(s, e)| value.get(s..=e))
        .unwrap_or_default();
    Ok(Reply::bulk(slice))
}

/// SETRANGE key offset value.
pub async fn setrange(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes], max_len: u64) -> KvResult<Reply> {
    let (key, value) = (arg(args, 1)?, arg(args, 3)?);
    let offset = parse_i64(arg(args, 2)?)?;
    let offset =
        usize::try_from(offset).map_err(|_| KvError::command("ERR offset is out of range"))?;
    let old = lock_string(tx, db, key).await?;
    if value.is_empty() {
        let len = old.map_or(0, |m| m.inline.len());
        return Ok(Reply::Integer(i64::try_from(len).unwrap_or(i64::MAX)));
    }
    let end = offset
        .checked_add(value.len())
        .filter(|&e| e as u64 <= max_len)
        .ok_or_else(|| KvError::command(TOO_BIG))?;
    let (mut current, expire) = old.map_or((Vec::new(), 0), |m| (m.inline, m.expire_at_ms));
    if current.len() < end {
        current.resize(end, 0);
    }
    if let Some(target) = current.get_mut(offset..end) {
        target.copy_from_slice(value);
    }
    let len = current.len();
    write_string(tx, db, key, &current, expire).await?;
    Ok(Reply::Integer(i64::try_from(len).unwrap_or(i64::MAX)))
}

async fn apply_increment(tx: &mut KvTxn<'_>, db: u8, key: &[u8], delta: i64) -> KvResult<Reply> {
    let old = lock_string(tx, db, key).await?;
    let (current, expire) = match &old {
        Some(m) => (
            parse_i64_opt(&m.inline).ok_or_else(KvError::not_integer)?,
            m.expire_at_ms,
        ),
        None => (0, 0),
    };
    let next = current
        .checked_add(delta)
        .ok_or_else(|| KvError::command("ERR increment or decrement would overflow"))?;
    write_string(tx, db, key, next.to_string().as_bytes(), expire).await?;
    Ok(Reply::Integer(next))
}

/// INCR / DECR (fixed delta) and INCRBY (delta from args[2]).
pub async fn incr_by(
    tx: &mut KvTxn<'_>,
    db: u8,
    args: &[Bytes],
    fixed: Option<i64>,
) -> KvResult<Reply> {
    let delta = match fixed {
        Some(d) => d,
        None => parse_i64(arg(args, 2)?)?,
    };
    apply_increment(tx, db, arg(args, 1)?, delta).await
}

/// DECRBY key decrement.
pub async fn decr_by(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let delta = parse_i64(arg(args, 2)?)?;
    let delta = delta
        .checked_neg()
        .ok_or_else(|| KvError::command("ERR decrement would overflow"))?;
    apply_increment(tx, db, arg(args, 1)?, delta).await
}

/// INCRBYFLOAT key increment.
pub async fn incr_by_float(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    // As Redis: the key's type, then its value, then the increment.
    let old = lock_string(tx, db, key).await?;
    let (current, expire) = match &old {
        Some(m) => (parse_f64(&m.inline)?, m.expire_at_ms),
        None => (0.0, 0),
    };
    let delta = parse_f64(arg(args, 2)?)?;
    let next = current + delta;
    if !next.is_finite() {
        return Err(KvError::command(
            "ERR increment would produce NaN or Infinity",
        ));
    }
    let text = format_float(next);
    write_string(tx, db, key, text.as_bytes(), expire).await?;
    Ok(Reply::bulk(text))
}
