//! List commands (push, pop, length, LRANGE, LINDEX, LSET, LTRIM) and the list layout.
//!
//! A list is a meta record (type list, size = length, `inline` = head u64 | tail u64) plus one
//! `kv_data` record per element under `(db, key, incarnation, index u64 BE)`. Elements occupy
//! the indexes `head..tail` without gaps; a new list starts at [`LIST_START`] (mid-range), so
//! pushes at either end only decrement `head` or increment `tail`: O(1) writes, no reads of
//! other elements. LINDEX/LSET are point reads/writes; LRANGE and pops are bounded range
//! scans. Invariants: `size == tail - head`; an emptied list is deleted; a writer locks the
//! meta and refreshes its snapshot before reading elements.

use crate::args::{arg, is, parse_i64};
use crate::error::{KvError, KvResult};
use crate::format::{KeyType, Meta, data_key};
use crate::reply::Reply;
use crate::store::KvTxn;
use bytes::Bytes;
use orcinus_storage::Direction;

/// Index of the first element of a new list (the middle of the u64 range).
pub const LIST_START: u64 = 1 << 63;
/// Elements read per range scan when a command walks a list (LPOS, LREM, LINSERT).
pub const SCAN_CHUNK: usize = 512;

/// A decoded list meta.
#[derive(Debug, Clone)]
pub struct List {
    /// The meta record (incarnation, expiry).
    pub meta: Meta,
    /// Index of the first element.
    pub head: u64,
    /// One past the index of the last element.
    pub tail: u64,
}

impl List {
    fn from_meta(meta: Meta) -> KvResult<Self> {
        let corrupt = || KvError::Corrupt("list meta without head/tail".into());
        let head = meta.inline.get(0..8).ok_or_else(corrupt)?;
        let tail = meta.inline.get(8..16).ok_or_else(corrupt)?;
        let head = u64::from_be_bytes(<[u8; 8]>::try_from(head).map_err(|_| corrupt())?);
        let tail = u64::from_be_bytes(<[u8; 8]>::try_from(tail).map_err(|_| corrupt())?);
        if tail < head || tail - head != meta.size {
            return Err(KvError::Corrupt(
                "list head/tail do not match its size".into(),
            ));
        }
        Ok(Self { meta, head, tail })
    }

    fn fresh(tx: &KvTxn<'_>) -> Self {
        Self {
            meta: Meta {
                key_type: KeyType::List,
                expire_at_ms: 0,
                incarnation: tx.store().new_incarnation(),
                size: 0,
                inline: Vec::new(),
            },
            head: LIST_START,
            tail: LIST_START,
        }
    }

    /// Number of elements.
    #[must_use]
    pub fn len(&self) -> u64 {
        self.tail.saturating_sub(self.head)
    }

    /// True if the list has no elements.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn to_meta(&self) -> Meta {
        let mut meta = self.meta.clone();
        meta.size = self.len();
        meta.inline = [self.head.to_be_bytes(), self.tail.to_be_bytes()].concat();
        meta
    }

    /// The `kv_data` key of the element at absolute `index`.
    #[must_use]
    pub fn elem_key(&self, db: u8, key: &[u8], index: u64) -> Vec<u8> {
        data_key(db, key, self.meta.incarnation, &index.to_be_bytes())
    }
}

/// Which end of a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The head (LPUSH / LPOP).
    Left,
    /// The tail (RPUSH / RPOP).
    Right,
}

impl End {
    /// Parses `LEFT` / `RIGHT` (case-insensitive); anything else is a syntax error.
    pub fn parse(raw: &[u8]) -> KvResult<Self> {
        if is(raw, "LEFT") {
            Ok(Self::Left)
        } else if is(raw, "RIGHT") {
            Ok(Self::Right)
        } else {
            Err(KvError::syntax())
        }
    }
}

/// Reads a list (consistent snapshot); WRONGTYPE for another type.
pub fn read_list(tx: &KvTxn<'_>, db: u8, key: &[u8]) -> KvResult<Option<List>> {
    match tx.meta(db, key)? {
        Some(m) if m.key_type != KeyType::List => Err(KvError::wrong_type()),
        Some(m) => List::from_meta(m).map(Some),
        None => Ok(None),
    }
}

/// Locks a list key for writing and refreshes the snapshot; WRONGTYPE for another type.
pub async fn lock_list(tx: &mut KvTxn<'_>, db: u8, key: &[u8]) -> KvResult<Option<List>> {
    let existing = tx.meta_for_update(db, key).await?;
    tx.refresh();
    match existing {
        Some(m) if m.key_type != KeyType::List => Err(KvError::wrong_type()),
        Some(m) => List::from_meta(m).map(Some),
        None => Ok(None),
    }
}

/// Like [`lock_list`], creating an empty list (not yet stored) for an absent key.
pub async fn lock_or_create(tx: &mut KvTxn<'_>, db: u8, key: &[u8]) -> KvResult<List> {
    match lock_list(tx, db, key).await? {
        Some(list) => Ok(list),
        None => Ok(List::fresh(tx)),
    }
}

/// Writes back a list's meta (deleting the key when the list is empty).
pub async fn save_list(tx: &mut KvTxn<'_>, db: u8, key: &[u8], list: &List) -> KvResult<()> {
    if list.is_empty() {
        tx.delete_meta(db, key).await
    } else {
        tx.put_meta(db, key, &list.to_meta()).await
    }
}

/// Elements at offsets `from..to` (relative to the head), in order, or reversed.
pub fn range(
    tx: &KvTxn<'_>,
    db: u8,
    key: &[u8],
    list: &List,
    from: u64,
    to: u64,
    reverse: bool,
) -> KvResult<Vec<Bytes>> {
    let to = to.min(list.len());
    if from >= to {
        return Ok(Vec::new());
    }
    let (lo, hi) = (list.head + from, list.head + to);
    let limit = usize::try_from(to - from).unwrap_or(usize::MAX);
    let direction = if reverse {
        Direction::Reverse
    } else {
        Direction::Forward
    };
    let found = tx.member_range(
        db,
        key,
        list.meta.incarnation,
        &lo.to_be_bytes(),
        Some(&hi.to_be_bytes()),
        direction,
        limit,
    )?;
    if found.len() != limit {
        return Err(KvError::Corrupt("list element missing".into()));
    }
    Ok(found.into_iter().map(|(_, v)| v).collect())
}

/// Pushes `values` one by one at `end` (so LPUSH a b c leaves c first).
pub async fn push<'v>(
    tx: &mut KvTxn<'_>,
    db: u8,
    key: &[u8],
    list: &mut List,
    end: End,
    values: impl IntoIterator<Item = &'v [u8]>,
) -> KvResult<()> {
    let exhausted = || KvError::command("ERR list index space exhausted");
    for value in values {
        let index = match end {
            End::Left => {
                list.head = list.head.checked_sub(1).ok_or_else(exhausted)?;
                list.head
            }
            End::Right => {
                let index = list.tail;
                list.tail = list.tail.checked_add(1).ok_or_else(exhausted)?;
                index
            }
        };
        tx.put_member(&list.elem_key(db, key, index), value).await?;
    }
    Ok(())
}

/// Pops up to `count` elements from `end`, in pop order.
pub async fn pop(
    tx: &mut KvTxn<'_>,
    db: u8,
    key: &[u8],
    list: &mut List,
    end: End,
    count: u64,
) -> KvResult<Vec<Bytes>> {
    let n = count.min(list.len());
    let popped = match end {
        End::Left => range(tx, db, key, list, 0, n, false)?,
        End::Right => range(tx, db, key, list, list.len() - n, list.len(), true)?,
    };
    for i in 0..n {
        let index = match end {
            End::Left => list.head + i,
            End::Right => list.tail - 1 - i,
        };
        tx.delete_member(&list.elem_key(db, key, index)).await?;
    }
    match end {
        End::Left => list.head += n,
        End::Right => list.tail -= n,
    }
    Ok(popped)
}

/// LPUSH / RPUSH / LPUSHX / RPUSHX key element [element ...].
pub async fn push_cmd(
    tx: &mut KvTxn<'_>,
    db: u8,
    args: &[Bytes],
    end: End,
    only_existing: bool,
) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let mut list = match lock_list(tx, db, key).await? {
        Some(list) => list,
        None if only_existing => return Ok(Reply::Integer(0)),
        None => List::fresh(tx),
    };
    let values = args.iter().skip(2).map(Bytes::as_ref);
    push(tx, db, key, &mut list, end, values).await?;
    save_list(tx, db, key, &list).await?;
    Ok(Reply::Integer(len_reply(&list)))
}

fn len_reply(list: &List) -> i64 {
    i64::try_from(list.len()).unwrap_or(i64::MAX)
}

/// Parses a pop COUNT: a non-negative integer (Redis's single error text for both failures).
pub fn parse_pop_count(raw: &[u8]) -> KvResult<u64> {
    crate::args::parse_i64_opt(raw)
        .and_then(|n| u64::try_from(n).ok())
        .ok_or_else(|| KvError::command("ERR value is out of range, must be positive"))
}

/// LPOP / RPOP key [count].
pub async fn pop_cmd(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes], end: End) -> KvResult<Reply> {
    let name = match end {
        End::Left => "lpop",
        End::Right => "rpop",
    };
    if args.len() > 3 {
        return Err(KvError::arity(name));
    }
    let key = arg(args, 1)?;
    let count = args.get(2).map(|c| parse_pop_count(c)).transpose()?;
    let Some(mut list) = lock_list(tx, db, key).await? else {
        return Ok(match count {
            Some(_) => Reply::NullArray,
            None => Reply::Null,
        });
    };
    if count == Some(0) {
        return Ok(Reply::Array(Vec::new()));
    }
    let popped = pop(tx, db, key, &mut list, end, count.unwrap_or(1)).await?;
    save_list(tx, db, key, &list).await?;
    Ok(match count {
        Some(_) => Reply::Array(popped.into_iter().map(Reply::Bulk).collect()),
        None => popped.into_iter().next().map_or(Reply::Null, Reply::Bulk),
    })
}

/// LLEN key.
pub fn llen(tx: &KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let len = read_list(tx, db, arg(args, 1)?)?.map_or(0, |l| len_reply(&l));
    Ok(Reply::Integer(len))
}

/// Redis's start/stop normalisation for LRANGE / LTRIM: the offsets `from..to` selected, or
/// `None` for an empty selection.
#[must_use]
pub fn normalize_range(start: i64, stop: i64, len: u64) -> Option<(u64, u64)> {
    let len = i64::try_from(len).unwrap_or(i64::MAX);
    let mut start = if start < 0 {
        start.saturating_add(len)
    } else {
        start
    };
    let mut stop = if stop < 0 {
        stop.saturating_add(len)
    } else {
        stop
    };
    if start < 0 {
        start = 0;
    }
    if start > stop || start >= len {
        return None;
    }
    if stop >= len {
        stop = len - 1;
    }
    Some((u64::try_from(start).ok()?, u64::try_from(stop).ok()? + 1))
}

/// LRANGE key start stop (one bounded range scan).
pub fn lrange(tx: &KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let start = parse_i64(arg(args, 2)?)?;
    let stop = parse_i64(arg(args, 3)?)?;
    let Some(list) = read_list(tx, db, key)? else {
        return Ok(Reply::Array(Vec::new()));
    };
    let Some((from, to)) = normalize_range(start, stop, list.len()) else {
        return Ok(Reply::Array(Vec::new()));
    };
    let items = range(tx, db, key, &list, from, to, false)?;
    Ok(Reply::Array(items.into_iter().map(Reply::Bulk).collect()))
}

/// The offset an index argument names, if inside the list (negative counts from the tail).
#[must_use]
pub fn offset_of(index: i64, len: u64) -> Option<u64> {
    let len = i64::try_from(len).ok()?;
    let i = if index < 0 {
        index.checked_add(len)?
    } else {
        index
    };
    (0..len)
        .contains(&i)
        .then(|| u64::try_from(i).ok())
        .flatten()
}

/// LINDEX key index (a point read).
pub fn lindex(tx: &KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    // As Redis: the key (missing: nil; wrong type) before the index.
    let Some(list) = read_list(tx, db, key)? else {
        return Ok(Reply::Null);
    };
    let index = parse_i64(arg(args, 2)?)?;
    let Some(offset) = offset_of(index, list.len()) else {
        return Ok(Reply::Null);
    };
    let value = tx.member(&list.elem_key(db, key, list.head + offset))?;
    Ok(Reply::bulk_or_null(value))
}

/// LSET key index element (a point write, wherever the index is).
pub async fn lset(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let value = arg(args, 3)?;
    // As Redis: the key (missing: no such key; wrong type) before the index.
    let Some(list) = lock_list(tx, db, key).await? else {
        return Err(KvError::command("ERR no such key"));
    };
    let index = parse_i64(arg(args, 2)?)?;
    let Some(offset) = offset_of(index, list.len()) else {
        return Err(KvError::command("ERR index out of range"));
    };
    // The meta is unchanged; the lock taken above already marks the key as modified.
    tx.put_member(&list.elem_key(db, key, list.head + offset), value)
        .await?;
    Ok(Reply::ok())
}

/// LTRIM key start stop: deletes the trimmed ends (O(removed) blind deletes, no reads).
pub async fn ltrim(tx: &mut KvTxn<'_>, db: u8, args: &[Bytes]) -> KvResult<Reply> {
    let key = arg(args, 1)?;
    let start = parse_i64(arg(args, 2)?)?;
    let stop = parse_i64(arg(args, 3)?)?;
    let Some(mut list) = lock_list(tx, db, key).await? else {
        return Ok(Reply::ok());
    };
    let (from, to) = normalize_range(start, stop, list.len()).unwrap_or((0, 0));
    let (new_head, new_tail) = (list.head + from, list.head + to);
    let dropped = (list.head..new_head).chain(new_tail.max(new_head)..list.tail);
    for index in dropped {
        tx.delete_member(&list.elem_key(db, key, index)).await?;
    }
    if from >= to {
        list.tail = list.head;
    } else {
        (list.head, list.tail) = (new_head, new_tail);
    }
    save_list(tx, db, key, &list).await?;
    Ok(Reply::ok())
}
