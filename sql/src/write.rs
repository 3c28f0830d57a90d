//! Row writes with index maintenance and uniqueness checks, through a [`StmtCtx`].
//!
//! Invariants:
//! - A new primary key or unique-index key is checked with a LOCKING read of the latest
//!   committed version (`get_for_update`), so a concurrent DELETE of the same key makes the
//!   insert wait for that transaction instead of failing with 1062; a duplicate is 1062 only if
//!   the key still exists once we hold its lock.
//! - Every row write keeps every secondary index in step: insert adds all entries, delete removes
//!   all, update moves exactly the entries whose key changed.

use crate::catalog::{IndexDef, Table};
use crate::error::{SqlError, SqlResult};
use crate::rowio;
use crate::stmt_ctx::StmtCtx;
use crate::types::Datum;
use crate::value;

fn dup_error(table: &Table, key_name: &str, cols: &[usize], row: &[Datum]) -> SqlError {
    let shown: Vec<String> = cols
        .iter()
        .filter_map(|c| row.get(*c))
        .map(value::display)
        .collect();
    SqlError::DuplicateEntry {
        value: shown.join("-"),
        key: format!("{}.{}", table.def.name, key_name),
    }
}

fn index_has_null(ix: &IndexDef, row: &[Datum]) -> bool {
    ix.columns
        .iter()
        .any(|c| row.get(*c).is_none_or(Datum::is_null))
}

/// Removes a row and its index entries.
pub async fn delete_row(
    ctx: &mut StmtCtx<'_>,
    table: &Table,
    row_key: &[u8],
    row: &[Datum],
) -> SqlResult<()> {
    let pk_enc = row_key
        .get(rowio::PREFIX_LEN..)
        .unwrap_or_default()
        .to_vec();
    for ix in &table.def.indexes {
        let (k, _) = rowio::index_entry(ix, &table.types, row, &pk_enc)?;
        ctx.delete(k).await?;
    }
    ctx.delete(row_key.to_vec()).await
}

/// Locks and reads the row a unique-index key points at (if any).
async fn unique_conflict(
    ctx: &mut StmtCtx<'_>,
    table: &Table,
    ix: &IndexDef,
    row: &[Datum],
    own_pk: &[u8],
) -> SqlResult<Option<(Vec<u8>, Vec<Datum>)>> {
    if index_has_null(ix, row) {
        return Ok(None);
    }
    let (k, _) = rowio::index_entry(ix, &table.types, row, own_pk)?;
    let Some(pk) = ctx.get_for_update(&k).await? else {
        return Ok(None);
    };
    if pk == own_pk {
        return Ok(None);
    }
    let rk = rowio::row_key(table.def.id, &pk);
    let stored = ctx.get_for_update(&rk).await?.ok_or_else(|| {
        SqlError::Internal(format!("unique index {} points at a missing row", ix.name))
    })?;
    Ok(Some((rk, rowio::decode_row(table, &stored)?)))
}

/// Inserts `row` (already coerced; hidden row id in `rowid` for tables without a primary key).
/// With `replace`, conflicting rows are deleted first (REPLACE); returns how many were deleted.
pub async fn insert_row(
    ctx: &mut StmtCtx<'_>,
    table: &Table,
    row: &[Datum],
    rowid: Option<u64>,
    replace: bool,
) -> SqlResult<u64> {
    let def = &table.def;
    let pk_enc = rowio::pk_encoding(def, &table.types, row, rowid)?;
    let rk = rowio::row_key(def.id, &pk_enc);
    let mut deleted = 0;
    if let Some(old) = ctx.get_for_update(&rk).await? {
        if !replace {
            return Err(dup_error(table, "PRIMARY", &def.primary_key, row));
        }
        let old_row = rowio::decode_row(table, &old)?;
        delete_row(ctx, table, &rk, &old_row).await?;
        deleted += 1;
    }
    for ix in def.indexes.iter().filter(|i| i.unique) {
        if let Some((ork, orow)) = unique_conflict(ctx, table, ix, row, &pk_enc).await? {
            if !replace {
                return Err(dup_error(table, &ix.name, &ix.columns, row));
            }
            delete_row(ctx, table, &ork, &orow).await?;
            deleted += 1;
        }
    }
    for ix in &def.indexes {
        let (k, v) = rowio::index_entry(ix, &table.types, row, &pk_enc)?;
        ctx.put(k, v).await?;
    }
    ctx.put(rk, rowio::encode_row(table, row)?).await?;
    Ok(deleted)
}

/// Replaces `old` (stored at `row_key`, already locked) by `new`.
pub async fn update_row(
    ctx: &mut StmtCtx<'_>,
    table: &Table,
    row_key: &[u8],
    old: &[Datum],
    new: &[Datum],
) -> SqlResult<()> {
    let def = &table.def;
    let old_pk = row_key
        .get(rowio::PREFIX_LEN..)
        .unwrap_or_default()
        .to_vec();
    let new_pk = if def.primary_key.is_empty() {
        old_pk.clone()
    } else {
        rowio::pk_encoding(def, &table.types, new, None)?
    };
    let new_rk = rowio::row_key(def.id, &new_pk);
    if new_pk != old_pk && ctx.get_for_update(&new_rk).await?.is_some() {
        return Err(dup_error(table, "PRIMARY", &def.primary_key, new));
    }
    for ix in &def.indexes {
        let (ok, _) = rowio::index_entry(ix, &table.types, old, &old_pk)?;
        let (nk, nv) = rowio::index_entry(ix, &table.types, new, &new_pk)?;
        if ok == nk && old_pk == new_pk {
            continue;
        }
        if ix.unique
            && unique_conflict(ctx, table, ix, new, &new_pk)
                .await?
                .is_some_and(|(rk, _)| rk != row_key)
        {
            return Err(dup_error(table, &ix.name, &ix.columns, new));
        }
        ctx.delete(ok).await?;
        ctx.put(nk, nv).await?;
    }
    if new_pk != old_pk {
        ctx.delete(row_key.to_vec()).await?;
    }
    ctx.put(new_rk, rowio::encode_row(table, new)?).await
}
