//! Bitmap commands over string values, as in Redis: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP.
//! Bit 0 is the most significant bit of the first byte.
//!
//! Invariants: a bit offset is bounded by proto-max-bulk-len (`offset / 8 <
//! proto_max_bulk_len`), so SETBIT can grow a string to at most that size and never allocates
//! from an unchecked client number; index arithmetic is done in i128 / u64 and every byte
//! access is checked; SETBIT keeps the key's TTL, BITOP replaces the destination (and its TTL)
//! like SET; arguments are validated before anything is written.

use crate::args::{arg, is, parse_i64, parse_i64_opt};
use crate::cmd::strings::{lock_string, read_string, write_string};
use crate::error::{KvError, KvResult};
use crate::reply::Reply;
use crate::store::KvTxn;
use bytes::Bytes;

const BAD_OFFSET: &str = "ERR bit offset is not an integer or out of range";

/// Parses a bit offset: a non-negative integer with `offset / 8 < max_len`.
fn parse_bit_offset(raw: &[u8], max_len: u64) -> KvResult<u64> {
    parse_i64_opt(raw)
        .and_then(|n| u64::try_from(n).ok())
        .filter(|&n| (n >> 3) < max_len)
        .ok_or_else(|| KvError::command(BAD_OFFSET))
}

fn bit_at(value: &[u8], offset: u64) -> u8 {
    let byte = usize::try_from(offset >> 3)
        .ok()
        .and_then(|i| value.get(i))
        .copied()
        .unwrap_or(0);
    (byte >> (7 - (offset & 7))) & 1
}

/// SETBIT key offset value.
pub async fn setbit(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes], max_len: u64) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let offset = parse_bit_offset(arg(args, 2)?, max_len)?;
    let on = match parse_i64_opt(arg(args, 3)?) {
        Some(v @ (0 | 1)) => v == 1,
        _ => {
            return Err(KvError::command(
                "ERR bit is not an integer or out of range",
            ));
        }
    };
    let (mut value, expire) = lock_string(tx, db, key)
        .await?
        .map_or((Vec::new(), 0), |m| (m.inline, m.expire_at_ms));
    let index = usize::try_from(offset >> 3).map_err(|_| KvError::command(BAD_OFFSET))?;
    if value.len() <= index {
        value.resize(index + 1, 0);
    }
    let old = bit_at(&value, offset);
    if let Some(byte) = value.get_mut(index) {
        let mask = 1u8 << (7 - (offset & 7));
        if on {
            *byte |= mask;
        } else {
            *byte &= !mask;
        }
    }
    write_string(tx, db, key, &value, expire).await?;
    Ok(Reply::Integer(i64::from(old)))
}

/// GETBIT key offset.
pub fn getbit(tx: &KvTxn<'_>, db: u8, args: &[Bytes], max_len: u64) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let offset = parse_bit_offset(arg(args, 2)?, max_len)?;
    let bit = read_string(tx, db, key)?.map_or(0, |m| bit_at(&m.inline, offset));
    Ok(Reply::Integer(i64::from(bit)))
}

/// Parses the BYTE | BIT unit (true = BIT).
fn parse_unit(raw: &[u8]) -> KvResult<bool> {
    if is(raw, "BIT") {
        Ok(true)
    } else if is(raw, "BYTE") {
        Ok(false)
    } else {
        Err(KvError::syntax())
    }
}

/// Redis's start/end normalisation for a string of `len` bytes: returns the inclusive bit
/// range, or `None` when it is empty.
fn bit_range(len: usize, start: i64, end: i64, in_bits: bool) -> Option<(u64, u64)> {
    let total = i128::try_from(len).ok()? * if in_bits { 8 } else { 1 };
    let (mut s, mut e) = (i128::from(start), i128::from(end));
    if s < 0 {
        s += total;
    }
    if e < 0 {
        e += total;
    }
    s = s.max(0);
    e = e.max(0);
    if e >= total {
        e = total - 1;
    }
    if s > e {
        return None;
    }
    let (s, e) = if in_bits { (s, e) } else { (s * 8, e * 8 + 7) };
    Some((u64::try_from(s).ok()?, u64::try_from(e).ok()?))
}

/// The bits of byte `i` that lie inside `[first, last]` (absolute bit indexes).
fn range_mask(i: u64, first: u64, last: u64) -> u8 {
    let mut mask = 0xFFu8;
    if i == first >> 3 {
        mask &= 0xFF >> (first & 7);
    }
    if i == last >> 3 {
        mask &= 0xFF << (7 - (last & 7));
    }
    mask
}

/// Byte `i` of `value` (0 past its end).
fn byte_at(value: &[u8], i: u64) -> u8 {
    usize::try_from(i)
        .ok()
        .and_then(|i| value.get(i))
        .copied()
        .unwrap_or(0)
}

/// The byte at `i` with only the bits inside `[first, last]` kept.
fn masked_byte(value: &[u8], i: u64, first: u64, last: u64) -> u8 {
    byte_at(value, i) & range_mask(i, first, last)
}

/// BITCOUNT key [start end [BYTE | BIT]].
pub fn bitcount(tx: &KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    // As Redis: the key first (missing: 0 whatever the arguments; wrong type), then the range.
    let Some(meta) = read_string(tx, db, key)? else {
        return Ok(Reply::Integer(0));
    };
    let range = match args.len() {
        2 => None,
        4 | 5 => {
            let start = parse_i64(arg(args, 2)?)?;
            let end = parse_i64(arg(args, 3)?)?;
            let in_bits = args
                .get(4)
                .map(|u| parse_unit(u))
                .transpose()?
                .unwrap_or(false);
            Some((start, end, in_bits))
        }
        _ => return Err(KvError::syntax()),
    };
    let value = &meta.inline;
    let bits = match range {
        Some((start, end, _)) if start < 0 && end < 0 && start > end => None,
        Some((start, end, in_bits)) => bit_range(value.len(), start, end, in_bits),
        None => bit_range(value.len(), 0, -1, false),
    };
    let Some((first, last)) = bits else {
        return Ok(Reply::Integer(0));
    };
    let (first_byte, last_byte) = (first >> 3, last >> 3);
    let mut count = 0u64;
    // Whole bytes in the middle, then the two (possibly partial) edge bytes.
    if last_byte > first_byte + 1 {
        let middle = usize::try_from(first_byte + 1)
            .ok()
            .zip(usize::try_from(last_byte).ok());
        if let Some(slice) = middle.and_then(|(a, b)| value.get(a..b)) {
            count += slice.iter().map(|b| u64::from(b.count_ones())).sum::<u64>();
        }
    }
    count += u64::from(masked_byte(value, first_byte, first, last).count_ones());
    if last_byte != first_byte {
        count += u64::from(masked_byte(value, last_byte, first, last).count_ones());
    }
    Ok(Reply::Integer(i64::try_from(count).unwrap_or(i64::MAX)))
}

/// BITPOS key bit [start [end [BYTE | BIT]]].
pub fn bitpos(tx: &KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let bit = parse_i64(arg(args, 2)?)?;
    if bit != 0 && bit != 1 {
        return Err(KvError::command("ERR The bit argument must be 1 or 0."));
    }
    let Some(meta) = read_string(tx, db, key)? else {
        return Ok(Reply::Integer(if bit == 1 { -1 } else { 0 }));
    };
    let value = &meta.inline;
    if args.len() > 6 {
        return Err(KvError::syntax());
    }
    let start = args.get(3).map(|s| parse_i64(s)).transpose()?.unwrap_or(0);
    let in_bits = args
        .get(5)
        .map(|u| parse_unit(u))
        .transpose()?
        .unwrap_or(false);
    let end_arg = args.get(4).map(|e| parse_i64(e)).transpose()?;
    let end = end_arg.unwrap_or(-1);
    let Some((first, last)) = bit_range(value.len(), start, end, in_bits) else {
        return Ok(Reply::Integer(-1));
    };
    for i in (first >> 3)..=(last >> 3) {
        let byte = byte_at(value, i);
        let wanted = if bit == 1 { byte } else { !byte };
        let candidates = wanted & range_mask(i, first, last);
        if candidates != 0 {
            let pos = i * 8 + u64::from(candidates.leading_zeros());
            return Ok(Reply::Integer(i64::try_from(pos).unwrap_or(i64::MAX)));
        }
    }
    if bit == 1 || end_arg.is_some() {
        return Ok(Reply::Integer(-1));
    }
    Ok(Reply::Integer(i64::try_from(last + 1).unwrap_or(i64::MAX)))
}

/// The BITOP operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BitOp {
    And,
    Or,
    Xor,
    Not,
}

/// BITOP AND | OR | XOR | NOT destkey key [key ...].
pub async fn bitop(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let op_name = arg(args, 1)?;
    let op = [
        ("AND", BitOp::And),
        ("OR", BitOp::Or),
        ("XOR", BitOp::Xor),
        ("NOT", BitOp::Not),
    ]
    .into_iter()
    .find(|(name, _)| is(op_name, name))
    .map(|(_, op)| op)
    .ok_or_else(KvError::syntax)?;
    let dest = arg(args, 2)?;
    let sources: Vec<&[u8]> = args.iter().skip(3).map(Bytes::as_ref).collect();
    if op == BitOp::Not && sources.len() != 1 {
        return Err(KvError::command(
            "ERR BITOP NOT must be called with a single source key.",
        ));
    }
    let mut all = sources.clone();
    all.push(dest);
    tx.lock_keys_for_read(db, &all).await?;
    tx.refresh();
    let mut values = Vec::new();
    for key in &sources {
        values.push(
            read_string(tx, db, key)?
                .map(|m| m.inline)
                .unwrap_or_default(),
        );
    }
    let max_len = values.iter().map(Vec::len).max().unwrap_or(0);
    let mut result = vec![0u8; max_len];
    for (i, out) in result.iter_mut().enumerate() {
        let mut bytes = values.iter().map(|v| v.get(i).copied().unwrap_or(0));
        let first = bytes.next().unwrap_or(0);
        *out = match op {
            BitOp::Not => !first,
            BitOp::And => bytes.fold(first, |acc, b| acc & b),
            BitOp::Or => bytes.fold(first, |acc, b| acc | b),
            BitOp::Xor => bytes.fold(first, |acc, b| acc ^ b),
        };
    }
    let existed = tx.meta_for_update(db, dest).await?.is_some();
    if max_len == 0 {
        if existed {
            tx.delete_meta(db, dest).await?;
        }
    } else {
        write_string(tx, db, dest, &result, 0).await?;
    }
    Ok(Reply::Integer(i64::try_from(max_len).unwrap_or(i64::MAX)))
}
