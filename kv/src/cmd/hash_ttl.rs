//! Hash field expiry (Redis 7.4): HEXPIRE, HPEXPIRE, HEXPIREAT, HPEXPIREAT, HTTL, HPTTL,
//! HEXPIRETIME, HPEXPIRETIME, HPERSIST; plus HRANDFIELD. Field values and the meta header
//! are described in `hash_fields.rs`.
//!
//! Per-field reply codes (as Redis): setters `-2` no such field, `0` condition (NX/XX/GT/LT)
//! not met, `1` expiry set, `2` field deleted because the time is not in the future; readers
//! `-2` no such field, `-1` no expiry; HPERSIST `-2`, `-1`, `1` expiry removed.
//!
//! Invariants: all arguments are validated before the first write; a setter converts a v1
//! hash to v2 (rewriting its members, once) before giving a field a TTL; a hash left without
//! live fields is deleted.

use crate::args::{arg, is, parse_i64, parse_i64_opt};
use crate::cmd::generic::ExpireUnit;
use crate::cmd::hashes::{live_members, purge_expired_fields, read_hash, store_hash};
use crate::error::{KvError, KvResult};
use crate::format::{KeyType, Meta, data_key};
use crate::hash_fields::{TtlHeader, decode_value, encode_value, header, set_header};
use crate::kv_server::KvServer;
use crate::reply::Reply;
use crate::store::KvTxn;
use bytes::Bytes;
use rand::Rng;
use rand::seq::SliceRandom;

/// Largest field expiry Redis accepts (Unix ms, 2^48 - 1).
pub const MAX_FIELD_EXPIRE_MS: i64 = (1 << 48) - 1;
/// Most elements HRANDFIELD returns for a negative count (each reply is built in memory).
pub const HRANDFIELD_MAX_REPEATS: u64 = 1 << 20;

/// Checks `FIELDS numfields field …` with FIELDS at `args[at]`; returns the fields.
fn parse_fields<'a>(args: &'a [Bytes], at: usize, count_error: &str) -> KvResult<&'a [Bytes]> {
    if !args.get(at).is_some_and(|a| is(a, "FIELDS")) {
        return Err(KvError::command(
            "ERR Mandatory argument FIELDS is missing or not at the right position",
        ));
    }
    let n = parse_i64_opt(arg(args, at + 1)?)
        .filter(|n| *n >= 1)
        .ok_or_else(|| KvError::command(count_error))?;
    let fields = args.get(at + 2..).unwrap_or_default();
    if usize::try_from(n).ok() != Some(fields.len()) {
        return Err(KvError::command(
            "ERR The `numfields` parameter must match the number of arguments",
        ));
    }
    Ok(fields)
}

const SETTER_COUNT_ERROR: &str = "ERR Parameter `numFields` should be greater than 0";
const READER_COUNT_ERROR: &str = "ERR Number of fields must be a positive integer";

/// The absolute field expiry (ms) an HEXPIRE-family argument names.
fn field_expire_at(raw: &[u8], unit: ExpireUnit, now_ms: u64, name: &str) -> KvResult<u64> {
    let invalid = || KvError::command(format!("ERR invalid expire time in '{name}' command"));
    let mut at = parse_i64(raw)?;
    if at < 0 {
        return Err(KvError::command("ERR invalid expire time, must be >= 0"));
    }
    if matches!(
        unit,
        ExpireUnit::RelativeSeconds | ExpireUnit::AbsoluteSeconds
    ) {
        if at > MAX_FIELD_EXPIRE_MS / 1000 {
            return Err(invalid());
        }
        at *= 1000;
    }
    let base = match unit {
        ExpireUnit::RelativeSeconds | ExpireUnit::RelativeMillis => {
            i64::try_from(now_ms).unwrap_or(MAX_FIELD_EXPIRE_MS)
        }
        ExpireUnit::AbsoluteSeconds | ExpireUnit::AbsoluteMillis => 0,
    };
    if at > MAX_FIELD_EXPIRE_MS - base {
        return Err(invalid());
    }
    u64::try_from(at + base).map_err(|_| invalid())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Condition {
    Always,
    Nx,
    Xx,
    Gt,
    Lt,
}

/// Locks a hash for a field-expiry write: `None` if absent (or all fields expired).
async fn lock_existing_hash(tx: &mut KvTxn<'_>, db: u8, key: &[u8]) -> KvResult<Option<Meta>> {
    let existing = tx.meta_for_update(db, key).await?;
    tx.refresh();
    let Some(mut meta) = existing else {
        return Ok(None);
    };
    if meta.key_type != KeyType::Hash {
        return Err(KvError::wrong_type());
    }
    if purge_expired_fields(tx, db, key, &mut meta).await? {
        store_hash(tx, db, key, &meta).await?;
    }
    Ok((meta.size > 0).then_some(meta))
}

/// Rewrites every member of a v1 hash in the v2 format (once per hash; O(fields)).
async fn convert_to_v2(tx: &mut KvTxn<'_>, db: u8, key: &[u8], meta: &mut Meta) -> KvResult<()> {
    if header(meta)?.is_some() {
        return Ok(());
    }
    for (f, raw) in tx.members(db, key, meta.incarnation)? {
        tx.put_member(
            &data_key(db, key, meta.incarnation, &f),
            &encode_value(true, 0, &raw),
        )
        .await?;
    }
    set_header(meta, TtlHeader::default());
    Ok(())
}

fn codes(n: usize, code: i64) -> Reply {
    Reply::Array(vec![Reply::Integer(code); n])
}

/// HEXPIRE / HPEXPIRE / HEXPIREAT / HPEXPIREAT key time [NX|XX|GT|LT] FIELDS n field ...
pub async fn hexpire(
    tx: &mut KvTxn<'_>,
    db: u8,
    args: &[Bytes],
    unit: ExpireUnit,
    name: &str,
) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let meta = lock_existing_hash(tx, db, key).await?;
    let now = tx.now_ms();
    let at = field_expire_at(arg(args, 2)?, unit, now, name)?;
    let option = arg(args, 3)?;
    let condition = [
        ("NX", Condition::Nx),
        ("XX", Condition::Xx),
        ("GT", Condition::Gt),
        ("LT", Condition::Lt),
    ]
    .into_iter()
    .find(|(word, _)| is(option, word))
    .map_or(Condition::Always, |(_, c)| c);
    let fields_at = if condition == Condition::Always { 3 } else { 4 };
    let fields = parse_fields(args, fields_at, SETTER_COUNT_ERROR)?;
    let Some(mut meta) = meta else {
        return Ok(codes(fields.len(), -2));
    };
    if at > now {
        convert_to_v2(tx, db, key, &mut meta).await?;
    }
    let v2 = header(&meta)?.is_some();
    let mut h = header(&meta)?.unwrap_or_default();
    let mut out = Vec::with_capacity(fields.len());
    for f in fields {
        let dk = data_key(db, key, meta.incarnation, f);
        let Some(raw) = tx.member(&dk)? else {
            out.push(Reply::Integer(-2));
            continue;
        };
        let current = decode_value(v2, &raw)?;
        let prev = current.expire_at_ms;
        let allowed = match condition {
            Condition::Always => true,
            Condition::Nx => prev == 0,
            Condition::Xx => prev != 0,
            Condition::Gt => prev != 0 && at > prev,
            Condition::Lt => prev == 0 || at < prev,
        };
        if !allowed {
            out.push(Reply::Integer(0));
            continue;
        }
        if prev != 0 {
            h.remove();
        }
        if at <= now {
            tx.delete_member(&dk).await?;
            meta.size = meta.size.saturating_sub(1);
            out.push(Reply::Integer(2));
        } else {
            h.add(at);
            tx.put_member(&dk, &encode_value(true, at, &current.value))
                .await?;
            out.push(Reply::Integer(1));
        }
    }
    if v2 {
        set_header(&mut meta, h);
    }
    store_hash(tx, db, key, &meta).await?;
    Ok(Reply::Array(out))
}

/// What an HTTL-family command reports.
#[derive(Debug, Clone, Copy)]
pub enum FieldTtlForm {
    /// HTTL (seconds, rounded up).
    RelativeSeconds,
    /// HPTTL.
    RelativeMillis,
    /// HEXPIRETIME.
    AbsoluteSeconds,
    /// HPEXPIRETIME.
    AbsoluteMillis,
}

/// HTTL / HPTTL / HEXPIRETIME / HPEXPIRETIME key FIELDS numfields field ...
pub fn httl(tx: &KvTxn<'_>, db: u8, args: &[Bytes], form: FieldTtlForm) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let meta = read_hash(tx, db, key)?;
    let fields = parse_fields(args, 2, READER_COUNT_ERROR)?;
    let Some(meta) = meta else {
        return Ok(codes(fields.len(), -2));
    };
    let v2 = header(&meta)?.is_some();
    let now = tx.now_ms();
    let mut out = Vec::with_capacity(fields.len());
    for f in fields {
        let value = match tx.member(&data_key(db, key, meta.incarnation, f))? {
            Some(raw) => decode_value(v2, &raw)?,
            None => {
                out.push(Reply::Integer(-2));
                continue;
            }
        };
        let at = value.expire_at_ms;
        let code = if value.is_expired(now) {
            -2
        } else if at == 0 {
            -1
        } else {
            let n = match form {
                FieldTtlForm::RelativeSeconds => (at - now).div_ceil(1000),
                FieldTtlForm::RelativeMillis => at - now,
                FieldTtlForm::AbsoluteSeconds => at / 1000,
                FieldTtlForm::AbsoluteMillis => at,
            };
            i64::try_from(n).unwrap_or(i64::MAX)
        };
        out.push(Reply::Integer(code));
    }
    Ok(Reply::Array(out))
}

/// HPERSIST key FIELDS numfields field ...
pub async fn hpersist(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let meta = lock_existing_hash(tx, db, key).await?;
    let fields = parse_fields(args, 2, READER_COUNT_ERROR)?;
    let Some(mut meta) = meta else {
        return Ok(codes(fields.len(), -2));
    };
    let Some(mut h) = header(&meta)? else {
        // A v1 hash has no field TTLs.
        let mut out = Vec::with_capacity(fields.len());
        for f in fields {
            let found = tx
                .member(&data_key(db, key, meta.incarnation, f))?
                .is_some();
            out.push(Reply::Integer(if found { -1 } else { -2 }));
        }
        return Ok(Reply::Array(out));
    };
    let mut out = Vec::with_capacity(fields.len());
    for f in fields {
        let dk = data_key(db, key, meta.incarnation, f);
        let Some(raw) = tx.member(&dk)? else {
            out.push(Reply::Integer(-2));
            continue;
        };
        let value = decode_value(true, &raw)?;
        if value.expire_at_ms == 0 {
            out.push(Reply::Integer(-1));
            continue;
        }
        h.remove();
        tx.put_member(&dk, &encode_value(true, 0, &value.value))
            .await?;
        out.push(Reply::Integer(1));
    }
    set_header(&mut meta, h);
    store_hash(tx, db, key, &meta).await?;
    Ok(Reply::Array(out))
}

/// HRANDFIELD key [count [WITHVALUES]]. Reads the live fields of the hash (O(fields)).
pub fn hrandfield(tx: &KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let count = match args.get(2) {
        None => None,
        Some(raw) => {
            let n = parse_i64(raw)?;
            if n == i64::MIN {
                // Redis's wording, as for SRANDMEMBER / ZRANDMEMBER.
                return Err(KvError::command(
                    "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807",
                ));
            }
            Some(n)
        }
    };
    let with_values = match args.get(3) {
        None => false,
        Some(w) if is(w, "WITHVALUES") && args.len() == 4 => true,
        Some(_) => return Err(KvError::syntax()),
    };
    if let Some(n) = count {
        let too_big_for_pairs = with_values && !(-(i64::MAX / 2)..=i64::MAX / 2).contains(&n);
        // Not in Redis: a repeat count is bounded, since the reply is built in memory.
        let too_many_repeats = n < 0 && n.unsigned_abs() > HRANDFIELD_MAX_REPEATS;
        if too_big_for_pairs || too_many_repeats {
            return Err(KvError::command("ERR value is out of range"));
        }
    }
    let meta = read_hash(tx, db, key)?;
    let mut members = match &meta {
        Some(m) => live_members(tx, db, key, m)?,
        None => Vec::new(),
    };
    let mut rng = rand::rng();
    let Some(n) = count else {
        if members.is_empty() {
            return Ok(Reply::Null);
        }
        let i = rng.random_range(0..members.len());
        return Ok(members
            .into_iter()
            .nth(i)
            .map_or(Reply::Null, |(f, _)| Reply::Bulk(f)));
    };
    let picked: Vec<(Bytes, Bytes)> = if members.is_empty() || n == 0 {
        Vec::new()
    } else if n > 0 {
        members.shuffle(&mut rng);
        members.truncate(usize::try_from(n).unwrap_or(usize::MAX));
        members
    } else {
        let repeats = usize::try_from(n.unsigned_abs()).unwrap_or(usize::MAX);
        (0..repeats)
            .filter_map(|_| members.get(rng.random_range(0..members.len())).cloned())
            .collect()
    };
    Ok(if with_values {
        Reply::Pairs(
            picked
                .into_iter()
                .map(|(f, v)| (Reply::Bulk(f), Reply::Bulk(v)))
                .collect(),
        )
    } else {
        Reply::Array(picked.into_iter().map(|(f, _)| Reply::Bulk(f)).collect())
    })
}

/// True if `meta` is a hash some of whose fields may have expired at `now_ms` (the sweeper
/// then calls [`sweep_expired_fields`] on it).
#[must_use]
pub fn needs_field_sweep(meta: &Meta, now_ms: u64) -> bool {
    meta.key_type == KeyType::Hash
        && header(meta)
            .ok()
            .flatten()
            .is_some_and(|h| h.may_have_expired(now_ms))
}

/// Purges the expired fields of one hash (deleting it if none is left), in its own
/// transaction under the key lock.
pub async fn sweep_expired_fields(server: &KvServer, db: u8, key: &[u8]) -> KvResult<()> {
    let mut tx = server.store().begin(crate::clock::now_ms());
    match tx.meta_for_update(db, key).await? {
        Some(meta) if meta.key_type == KeyType::Hash => {
            lock_existing_hash(&mut tx, db, key).await?;
            server.commit(tx).await
        }
        _ => Ok(()),
    }
}
