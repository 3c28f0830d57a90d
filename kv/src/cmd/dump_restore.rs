//! DUMP and RESTORE (generic group): a key's value as a Redis DUMP payload and back. The
//! payload codec is `crate::dump` (layout in kv/FORMAT.md); this module reads a value out
//! of the kv keyspaces and writes a decoded one in.
//!
//! Invariants: RESTORE checks everything in Redis's order before its first write (options,
//! BUSYKEY, TTL, payload trailer, payload object, element sizes); the restored key gets a
//! fresh incarnation, so a replaced collection's old members are never visible again; an
//! expiry already in the past creates nothing (and with REPLACE deletes the old key), as in
//! Redis. IDLETIME and FREQ are validated as Redis does and have no effect: Orcinus keeps
//! no LRU / LFU data because it never evicts keys.

use crate::args::{arg, is, parse_i64};
use crate::cmd::hashes::live_members;
use crate::cmd::lists::{LIST_START, range, read_list};
use crate::dump::{self, DumpError, DumpValue, HashField};
use crate::error::{KvError, KvResult};
use crate::format::{KeyType, Meta, data_key};
use crate::hash_fields::{TtlHeader, decode_value, encode_value, header, set_header};
use crate::reply::Reply;
use crate::score::{decode_member_value, encode_member_value, score_key};
use crate::store::KvTxn;
use bytes::Bytes;

/// `-BUSYKEY`, as Redis.
const BUSYKEY: &str = "BUSYKEY Target key name already exists.";
const BAD_PAYLOAD: &str = "ERR DUMP payload version or checksum are wrong";
const BAD_FORMAT: &str = "ERR Bad data format";
const BAD_TTL: &str = "ERR Invalid TTL value, must be >= 0";
const BAD_IDLETIME: &str = "ERR Invalid IDLETIME value, must be >= 0";
const BAD_FREQ: &str = "ERR Invalid FREQ value, must be >= 0 and <= 255";
const TOO_BIG: &str = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";

/// DUMP key: the payload, or nil for a missing key.
pub fn dump(tx: &KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let Some(meta) = tx.meta(db, key)? else {
        return Ok(Reply::Null);
    };
    Ok(match read_value(tx, db, key, &meta)? {
        Some(value) => Reply::Bulk(Bytes::from(dump::encode(&value))),
        None => Reply::Null,
    })
}

/// The live value of `key` (None: a hash whose fields have all expired, not yet purged).
fn read_value(tx: &KvTxn<'_>, db: u8, key: &[u8], meta: &Meta) -> KvResult<Option<DumpValue>> {
    let value = match meta.key_type {
        KeyType::String => DumpValue::String(Bytes::copy_from_slice(&meta.inline)),
        KeyType::List => {
            let Some(list) = read_list(tx, db, key)? else {
                return Ok(None);
            };
            DumpValue::List(range(tx, db, key, &list, 0, list.len(), false)?)
        }
        KeyType::Set => DumpValue::Set(
            tx.members(db, key, meta.incarnation)?
                .into_iter()
                .map(|(m, _)| m)
                .collect(),
        ),
        KeyType::Hash => DumpValue::Hash(hash_fields(tx, db, key, meta)?),
        KeyType::Zset => {
            let mut entries = Vec::new();
            for (member, raw) in tx.members(db, key, meta.incarnation)? {
                entries.push((member, decode_member_value(&raw)?));
            }
            DumpValue::Zset(entries)
        }
    };
    let empty = match &value {
        DumpValue::String(_) => false,
        DumpValue::List(v) | DumpValue::Set(v) => v.is_empty(),
        DumpValue::Hash(v) => v.is_empty(),
        DumpValue::Zset(v) => v.is_empty(),
    };
    Ok((!empty).then_some(value))
}

/// The live fields of a hash with their expiries.
fn hash_fields(tx: &KvTxn<'_>, db: u8, key: &[u8], meta: &Meta) -> KvResult<Vec<HashField>> {
    let plain = |(field, value)| HashField {
        field,
        value,
        expire_at_ms: 0,
    };
    if header(meta)?.is_none() {
        return Ok(live_members(tx, db, key, meta)?
            .into_iter()
            .map(plain)
            .collect());
    }
    let now = tx.now_ms();
    let mut out = Vec::new();
    for (field, raw) in tx.members(db, key, meta.incarnation)? {
        let v = decode_value(true, &raw)?;
        if !v.is_expired(now) {
            out.push(HashField {
                field,
                value: v.value,
                expire_at_ms: v.expire_at_ms,
            });
        }
    }
    Ok(out)
}

/// The options after the payload.
#[derive(Debug, Default)]
struct RestoreOptions {
    replace: bool,
    absttl: bool,
}

/// Parses `[REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]` as Redis does: IDLETIME
/// and FREQ exclude each other (a syntax error), their values are range-checked.
fn parse_options(args: &[Bytes]) -> KvResult<RestoreOptions> {
    let mut opts = RestoreOptions::default();
    let (mut idletime, mut freq) = (false, false);
    let mut i = 4;
    while let Some(option) = args.get(i) {
        let has_value = i + 1 < args.len();
        if is(option, "REPLACE") {
            opts.replace = true;
        } else if is(option, "ABSTTL") {
            opts.absttl = true;
        } else if is(option, "IDLETIME") && has_value && !freq {
            if parse_i64(arg(args, i + 1)?)? < 0 {
                return Err(KvError::command(BAD_IDLETIME));
            }
            idletime = true;
            i += 1;
        } else if is(option, "FREQ") && has_value && !idletime {
            if !(0..=255).contains(&parse_i64(arg(args, i + 1)?)?) {
                return Err(KvError::command(BAD_FREQ));
            }
            freq = true;
            i += 1;
        } else {
            return Err(KvError::syntax());
        }
        i += 1;
    }
    Ok(opts)
}

/// RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency].
pub async fn restore(
    tx: &mut KvTxn<'_>,
    db: u8,
    args: &[Bytes],
    max_bulk_len: u64,
) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let opts = parse_options(args)?;
    let existing = tx.meta_for_update(db, key).await?;
    if existing.is_some() && !opts.replace {
        return Err(KvError::command(BUSYKEY));
    }
    let ttl = parse_i64(arg(args, 2)?)?;
    let ttl = u64::try_from(ttl).map_err(|_| KvError::command(BAD_TTL))?;
    let value = dump::decode(arg(args, 3)?).map_err(|e| {
        KvError::command(match e {
            DumpError::VersionOrChecksum => BAD_PAYLOAD,
            DumpError::BadFormat => BAD_FORMAT,
        })
    })?;
    if !fits(&value, max_bulk_len) {
        return Err(KvError::command(TOO_BIG));
    }
    let now = tx.now_ms();
    let expire_at_ms = match ttl {
        0 => 0,
        at if opts.absttl => at,
        // Expiries stay within i64 ms, like every other expiry (PEXPIRETIME answers an i64).
        relative => now
            .checked_add(relative)
            .filter(|at| i64::try_from(*at).is_ok())
            .ok_or_else(|| KvError::command("ERR invalid expire time in 'restore' command"))?,
    };
    let value = drop_expired_fields(value, now);
    let already_expired = expire_at_ms != 0 && expire_at_ms <= now;
    match value {
        Some(value) if !already_expired => write_value(tx, db, key, value, expire_at_ms).await?,
        // Nothing to create: the old key (REPLACE) goes, as in Redis.
        _ if existing.is_some() => tx.delete_meta(db, key).await?,
        _ => {}
    }
    Ok(Reply::ok())
}

/// True if every string of `value` is within proto-max-bulk-len (LZF can inflate a string
/// beyond the payload's own size).
fn fits(value: &DumpValue, max: u64) -> bool {
    let ok = |b: &Bytes| b.len() as u64 <= max;
    match value {
        DumpValue::String(s) => ok(s),
        DumpValue::List(items) | DumpValue::Set(items) => items.iter().all(ok),
        DumpValue::Hash(fields) => fields.iter().all(|f| ok(&f.field) && ok(&f.value)),
        DumpValue::Zset(entries) => entries.iter().all(|(m, _)| ok(m)),
    }
}

/// Leaves out hash fields whose expiry has passed; None if no field is left.
fn drop_expired_fields(value: DumpValue, now: u64) -> Option<DumpValue> {
    let DumpValue::Hash(fields) = value else {
        return Some(value);
    };
    let live: Vec<HashField> = fields
        .into_iter()
        .filter(|f| f.expire_at_ms == 0 || f.expire_at_ms > now)
        .collect();
    (!live.is_empty()).then_some(DumpValue::Hash(live))
}

/// Writes `value` as a new incarnation of `key` (the caller holds the key's lock).
async fn write_value(
    tx: &mut KvTxn<'_>,
    db: u8,
    key: &[u8],
    value: DumpValue,
    expire_at_ms: u64,
) -> KvResult<()> {
    let (key_type, size) = match &value {
        DumpValue::String(s) => {
            return tx
                .put_meta(db, key, &Meta::string(s.to_vec(), expire_at_ms))
                .await;
        }
        DumpValue::List(items) => (KeyType::List, items.len()),
        DumpValue::Set(items) => (KeyType::Set, items.len()),
        DumpValue::Hash(fields) => (KeyType::Hash, fields.len()),
        DumpValue::Zset(entries) => (KeyType::Zset, entries.len()),
    };
    let mut meta = Meta::collection(key_type, tx.store().new_incarnation());
    meta.expire_at_ms = expire_at_ms;
    meta.size = size as u64;
    let inc = meta.incarnation;
    match value {
        DumpValue::String(_) => {}
        DumpValue::List(items) => {
            let mut index = LIST_START;
            for item in &items {
                tx.put_member(&data_key(db, key, inc, &index.to_be_bytes()), item)
                    .await?;
                index += 1;
            }
            meta.inline = [LIST_START.to_be_bytes(), index.to_be_bytes()].concat();
        }
        DumpValue::Set(members) => {
            for member in &members {
                tx.put_member(&data_key(db, key, inc, member), &[]).await?;
            }
        }
        DumpValue::Hash(fields) => {
            let mut ttls = TtlHeader::default();
            for f in fields.iter().filter(|f| f.expire_at_ms != 0) {
                ttls.add(f.expire_at_ms);
            }
            let v2 = ttls.ttl_fields > 0;
            for f in &fields {
                let raw = encode_value(v2, f.expire_at_ms, &f.value);
                tx.put_member(&data_key(db, key, inc, &f.field), &raw)
                    .await?;
            }
            if v2 {
                set_header(&mut meta, ttls);
            }
        }
        DumpValue::Zset(entries) => {
            for (member, score) in &entries {
                tx.put_member(
                    &data_key(db, key, inc, member),
                    &encode_member_value(*score),
                )
                .await?;
                tx.put_score_entry(&score_key(db, key, inc, *score, member))
                    .await?;
            }
        }
    }
    tx.put_meta(db, key, &meta).await
}
