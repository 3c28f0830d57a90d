//! Generic key commands: DEL/UNLINK, EXISTS, TYPE, KEYS, SCAN, RANDOMKEY, RENAME(NX), the
//! EXPIRE family, TTL family, PERSIST, COPY. DEL and overwrite only touch meta records (O(1)
//! per key); RENAME and COPY of a hash rewrite its members (O(fields)), because members are
//! stored under the user key.

use crate::args::{arg, is, lossy, parse_i64};
use crate::cmd::connection::parse_db;
use crate::cmd::hashes::copy_members;
use crate::error::{KvError, KvResult};
use crate::format::{KeyType, Meta};
use crate::glob::{glob_match, literal_prefix};
use crate::kv_server::KvServer;
use crate::reply::Reply;
use crate::store::KvTxn;
use bytes::Bytes;
use rand::Rng;

/// DEL / UNLINK key [key ...].
pub async fn del(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let keys: Vec<&[u8]> = args.iter().skip(1).map(Bytes::as_ref).collect();
    tx.lock_keys(db, &keys).await?;
    let mut deleted = 0;
    for key in keys {
        if tx.meta_for_update(db, key).await?.is_some() {
            tx.delete_meta(db, key).await?;
            deleted += 1;
        }
    }
    Ok(Reply::Integer(deleted))
}

/// EXISTS key [key ...] (a key named twice counts twice).
pub fn exists(tx: &KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let mut found = 0;
    for key in args.iter().skip(1) {
        found += i64::from(tx.meta(db, key)?.is_some());
    }
    Ok(Reply::Integer(found))
}

/// TYPE key.
pub fn key_type(tx: &KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let name = tx
        .meta(db, arg(args, 1)?)?
        .map_or("none", |m| m.key_type.name());
    Ok(Reply::Simple(name.into()))
}

/// KEYS pattern (a scan of the pattern's literal prefix, filtered by the glob).
pub fn keys(tx: &KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let pattern = arg(args, 1)?;
    let (found, _) = tx.scan_keys(db, literal_prefix(pattern), None, usize::MAX)?;
    Ok(Reply::Array(
        found
            .into_iter()
            .filter(|(k, _)| glob_match(pattern, k))
            .map(|(k, _)| Reply::Bulk(k))
            .collect(),
    ))
}

/// Parsed SCAN / HSCAN options.
pub struct ScanOptions {
    /// Cursor (0 = start).
    pub cursor: u64,
    /// MATCH pattern.
    pub pattern: Option<Bytes>,
    /// COUNT.
    pub count: usize,
    /// TYPE filter (SCAN only).
    pub type_name: Option<String>,
}

/// A SCAN-family cursor argument: an unsigned integer (`ERR invalid cursor` otherwise).
pub fn parse_scan_cursor(raw: &[u8]) -> KvResult<u64> {
    std::str::from_utf8(raw)
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .ok_or_else(|| KvError::command("ERR invalid cursor"))
}

/// Parses `cursor [MATCH p] [COUNT n] [TYPE t]` starting at `args[first]`.
pub fn parse_scan_options(args: &[Bytes], first: usize, allow_type: bool) -> KvResult<ScanOptions> {
    let cursor = parse_scan_cursor(arg(args, first)?)?;
    let mut opts = ScanOptions {
        cursor,
        pattern: None,
        count: 10,
        type_name: None,
    };
    let mut i = first + 1;
    while let Some(option) = args.get(i) {
        let value = args.get(i + 1).ok_or_else(KvError::syntax)?;
        if is(option, "MATCH") {
            opts.pattern = Some(value.clone());
        } else if is(option, "COUNT") {
            let n = parse_i64(value)?;
            if n < 1 {
                return Err(KvError::syntax());
            }
            opts.count = usize::try_from(n).unwrap_or(usize::MAX);
        } else if is(option, "TYPE") && allow_type {
            opts.type_name = Some(lossy(value).to_ascii_lowercase());
        } else {
            return Err(KvError::syntax());
        }
        i += 2;
    }
    Ok(opts)
}

/// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type].
pub fn scan(server: &KvServer, tx: &KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let opts = parse_scan_options(args, 1, true)?;
    let resume = match opts.cursor {
        0 => None,
        c => Some(
            server
                .cursors
                .resume_key(db, c)
                .ok_or_else(|| KvError::command("ERR invalid cursor"))?,
        ),
    };
    let prefix = opts
        .pattern
        .as_deref()
        .map(literal_prefix)
        .unwrap_or_default();
    let (found, next) = tx.scan_keys(db, prefix, resume.as_deref(), opts.count)?;
    let keys = found
        .into_iter()
        .filter(|(k, _)| opts.pattern.as_deref().is_none_or(|p| glob_match(p, k)))
        .filter(|(_, t)| opts.type_name.as_deref().is_none_or(|n| n == t.name()))
        .map(|(k, _)| Reply::Bulk(k))
        .collect();
    let cursor = next.map_or(0, |key| server.cursors.store(db, key));
    Ok(Reply::Array(vec![
        Reply::bulk(cursor.to_string()),
        Reply::Array(keys),
    ]))
}

/// RANDOMKEY: the first live key at or after a random point (wrapping once).
pub fn randomkey(tx: &KvTxn<'_>, db: u8) -> KvResult<Reply> {
    let point: [u8; 8] = rand::rng().random();
    let (found, _) = tx.scan_keys(db, b"", Some(&point), 64)?;
    if let Some((key, _)) = found.into_iter().next() {
        return Ok(Reply::Bulk(key));
    }
    let (found, _) = tx.scan_keys(db, b"", None, 64)?;
    Ok(found
        .into_iter()
        .next()
        .map_or(Reply::Null, |(k, _)| Reply::Bulk(k)))
}

/// Locks two keys (possibly in different dbs) in a fixed order; returns their metas.
async fn lock_pair(
    tx: &mut KvTxn<'_>,
    a: (u8, &[u8]),
    b: (u8, &[u8]),
) -> KvResult<(Option<Meta>, Option<Meta>)> {
    if a <= b {
        let ma = tx.meta_for_update(a.0, a.1).await?;
        let mb = tx.meta_for_update(b.0, b.1).await?;
        Ok((ma, mb))
    } else {
        let mb = tx.meta_for_update(b.0, b.1).await?;
        let ma = tx.meta_for_update(a.0, a.1).await?;
        Ok((ma, mb))
    }
}

/// Writes `meta` (from src) as the value of `dst`, copying members for collections.
async fn place_copy(
    tx: &mut KvTxn<'_>,
    src: (u8, &[u8]),
    dst: (u8, &[u8]),
    meta: &Meta,
) -> KvResult<()> {
    let mut copy = meta.clone();
    copy.incarnation = tx.store().new_incarnation();
    if meta.key_type != KeyType::String {
        copy_members(tx, src, meta.incarnation, dst, copy.incarnation).await?;
    }
    if meta.key_type == KeyType::Zset {
        crate::cmd::zsets::copy_score_index(tx, src, meta.incarnation, dst, copy.incarnation)
            .await?;
    }
    tx.put_meta(dst.0, dst.1, &copy).await
}

/// RENAME / RENAMENX key newkey.
pub async fn rename(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes], only_new: bool) -> KvResult<Reply> {
    let (src, dst) = (arg(args, 1)?, arg(args, 2)?);
    let (src_meta, dst_meta) = lock_pair(tx, (db, src), (db, dst)).await?;
    let Some(src_meta) = src_meta else {
        return Err(KvError::command("ERR no such key"));
    };
    if src == dst {
        return Ok(if only_new {
            Reply::Integer(0)
        } else {
            Reply::ok()
        });
    }
    if only_new && dst_meta.is_some() {
        return Ok(Reply::Integer(0));
    }
    place_copy(tx, (db, src), (db, dst), &src_meta).await?;
    tx.delete_meta(db, src).await?;
    Ok(if only_new {
        Reply::Integer(1)
    } else {
        Reply::ok()
    })
}

/// COPY source destination [DB destination-db] [REPLACE].
pub async fn copy(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let (src, dst) = (arg(args, 1)?, arg(args, 2)?);
    let (mut dst_db, mut replace) = (db, false);
    let mut i = 3;
    while let Some(option) = args.get(i) {
        if is(option, "REPLACE") {
            replace = true;
            i += 1;
        } else if is(option, "DB") && i + 1 < args.len() {
            dst_db = parse_db(arg(args, i + 1)?)?;
            i += 2;
        } else {
            return Err(KvError::syntax());
        }
    }
    if dst_db == db && src == dst {
        return Err(KvError::command(
            "ERR source and destination objects are the same",
        ));
    }
    let (src_meta, dst_meta) = lock_pair(tx, (db, src), (dst_db, dst)).await?;
    let Some(src_meta) = src_meta else {
        return Ok(Reply::Integer(0));
    };
    if dst_meta.is_some() && !replace {
        return Ok(Reply::Integer(0));
    }
    place_copy(tx, (db, src), (dst_db, dst), &src_meta).await?;
    Ok(Reply::Integer(1))
}

/// How an EXPIRE-family argument is interpreted.
#[derive(Debug, Clone, Copy)]
pub enum ExpireUnit {
    /// EXPIRE.
    RelativeSeconds,
    /// PEXPIRE.
    RelativeMillis,
    /// EXPIREAT.
    AbsoluteSeconds,
    /// PEXPIREAT.
    AbsoluteMillis,
}

impl ExpireUnit {
    fn command(self) -> &'static str {
        match self {
            Self::RelativeSeconds => "expire",
            Self::RelativeMillis => "pexpire",
            Self::AbsoluteSeconds => "expireat",
            Self::AbsoluteMillis => "pexpireat",
        }
    }

    /// Absolute expiry in ms (may be ≤ now, meaning "delete"); None on overflow.
    fn absolute_ms(self, now_ms: u64, n: i64) -> Option<i64> {
        let now = i64::try_from(now_ms).ok()?;
        match self {
            Self::RelativeSeconds => n.checked_mul(1000)?.checked_add(now),
            Self::RelativeMillis => n.checked_add(now),
            Self::AbsoluteSeconds => n.checked_mul(1000),
            Self::AbsoluteMillis => Some(n),
        }
    }
}

/// EXPIRE / PEXPIRE / EXPIREAT / PEXPIREAT key value [NX|XX|GT|LT].
pub async fn expire(
    tx: &mut KvTxn<'_>,
    db: u8,
    args: &[Bytes],
    unit: ExpireUnit,
) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let n = parse_i64(arg(args, 2)?)?;
    let (mut nx, mut xx, mut gt, mut lt) = (false, false, false, false);
    for option in args.iter().skip(3) {
        if is(option, "NX") {
            nx = true;
        } else if is(option, "XX") {
            xx = true;
        } else if is(option, "GT") {
            gt = true;
        } else if is(option, "LT") {
            lt = true;
        } else {
            return Err(KvError::command(format!(
                "ERR Unsupported option {}",
                lossy(option)
            )));
        }
    }
    if nx && (xx || gt || lt) {
        return Err(KvError::command(
            "ERR NX and XX, GT or LT options at the same time are not compatible",
        ));
    }
    if gt && lt {
        return Err(KvError::command(
            "ERR GT and LT options at the same time are not compatible",
        ));
    }
    let at = unit.absolute_ms(tx.now_ms(), n).ok_or_else(|| {
        KvError::command(format!(
            "ERR invalid expire time in '{}' command",
            unit.command()
        ))
    })?;
    let Some(mut meta) = tx.meta_for_update(db, key).await? else {
        return Ok(Reply::Integer(0));
    };
    // No TTL counts as an infinite TTL for GT / LT.
    let current = (meta.expire_at_ms != 0).then_some(meta.expire_at_ms);
    let new = u64::try_from(at).unwrap_or(0);
    let allowed = (!nx || current.is_none())
        && (!xx || current.is_some())
        && (!gt || current.is_some_and(|c| new > c))
        && (!lt || current.is_none_or(|c| new < c));
    if !allowed {
        return Ok(Reply::Integer(0));
    }
    if at <= i64::try_from(tx.now_ms()).unwrap_or(i64::MAX) {
        tx.delete_meta(db, key).await?;
    } else {
        meta.expire_at_ms = new;
        tx.put_meta(db, key, &meta).await?;
    }
    Ok(Reply::Integer(1))
}

/// What a TTL-family command reports.
#[derive(Debug, Clone, Copy)]
pub enum TtlForm {
    /// TTL.
    RelativeSeconds,
    /// PTTL.
    RelativeMillis,
    /// EXPIRETIME.
    AbsoluteSeconds,
    /// PEXPIRETIME.
    AbsoluteMillis,
}

/// TTL / PTTL / EXPIRETIME / PEXPIRETIME key: -2 if missing, -1 if no expiry.
pub fn ttl(tx: &KvTxn<'_>, db: u8, args: &[Bytes], form: TtlForm) -> KvResult<Reply> {
    let Some(meta) = tx.meta(db, arg(args, 1)?)? else {
        return Ok(Reply::Integer(-2));
    };
    if meta.expire_at_ms == 0 {
        return Ok(Reply::Integer(-1));
    }
    let remaining = meta.expire_at_ms.saturating_sub(tx.now_ms());
    let value = match form {
        TtlForm::RelativeSeconds => remaining.saturating_add(500) / 1000,
        TtlForm::RelativeMillis => remaining,
        TtlForm::AbsoluteSeconds => meta.expire_at_ms / 1000,
        TtlForm::AbsoluteMillis => meta.expire_at_ms,
    };
    Ok(Reply::Integer(i64::try_from(value).unwrap_or(i64::MAX)))
}

/// PERSIST key.
pub async fn persist(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    match tx.meta_for_update(db, key).await? {
        Some(mut meta) if meta.expire_at_ms != 0 => {
            meta.expire_at_ms = 0;
            tx.put_meta(db, key, &meta).await?;
            Ok(Reply::Integer(1))
        }
        _ => Ok(Reply::Integer(0)),
    }
}
