//! Row and index-entry byte layout helpers over `sql/FORMAT.md`: building row keys from primary
//! key values, index entries from rows, recovering the primary-key suffix from an index entry,
//! and building a new index over existing rows.
//!
//! Invariant: the primary-key encoding (`pk_enc`) is exactly the row key minus its
//! `'r' · table id` prefix; index entries carry that same suffix, so an index hit turns into a
//! row key by prefixing it again.

use crate::catalog::{Catalog, IndexDef, Table, TableDef};
use crate::codec::{key, row};
use crate::error::{SqlError, SqlResult};
use crate::types::{Datum, SqlType};
use orcinus_storage::WriteBatch;

/// Length of the `'r' · table id` / `'i' · index id` prefixes.
pub const PREFIX_LEN: usize = 5;

/// The hidden row-id type of tables without a primary key.
pub const ROWID_TYPE: SqlType = SqlType::BigInt { unsigned: true };

/// Encodes the primary-key values of `row` (or the hidden row id).
pub fn pk_encoding(
    def: &TableDef,
    types: &[SqlType],
    row: &[Datum],
    rowid: Option<u64>,
) -> SqlResult<Vec<u8>> {
    let mut out = Vec::with_capacity(16);
    if def.primary_key.is_empty() {
        let id = rowid.ok_or_else(|| SqlError::Internal("hidden row id missing".into()))?;
        key::encode(&mut out, &Datum::UInt(id), ROWID_TYPE)?;
        return Ok(out);
    }
    for &c in &def.primary_key {
        let (d, ty) = row
            .get(c)
            .zip(types.get(c))
            .ok_or_else(|| SqlError::Internal("pk column out of row".into()))?;
        key::encode(&mut out, d, *ty)?;
    }
    Ok(out)
}

/// The row key for a primary-key encoding.
#[must_use]
pub fn row_key(table_id: u32, pk_enc: &[u8]) -> Vec<u8> {
    let mut k = key::row_prefix(table_id);
    k.extend_from_slice(pk_enc);
    k
}

/// The key and value of `row`'s entry in index `ix`.
pub fn index_entry(
    ix: &IndexDef,
    types: &[SqlType],
    row: &[Datum],
    pk_enc: &[u8],
) -> SqlResult<(Vec<u8>, Vec<u8>)> {
    let mut k = key::index_prefix(ix.id);
    let mut has_null = false;
    for &c in &ix.columns {
        let (d, ty) = row
            .get(c)
            .zip(types.get(c))
            .ok_or_else(|| SqlError::Internal("index column out of row".into()))?;
        has_null |= d.is_null();
        key::encode(&mut k, d, *ty)?;
    }
    if ix.unique {
        if has_null {
            k.extend_from_slice(pk_enc);
        }
        Ok((k, pk_enc.to_vec()))
    } else {
        k.extend_from_slice(pk_enc);
        Ok((k, Vec::new()))
    }
}

/// The primary-key encoding an index entry points at.
pub fn pk_from_index_entry(
    ix: &IndexDef,
    types: &[SqlType],
    k: &[u8],
    v: &[u8],
) -> SqlResult<Vec<u8>> {
    if ix.unique {
        return Ok(v.to_vec());
    }
    let mut rest = k
        .get(PREFIX_LEN..)
        .ok_or_else(|| SqlError::Internal("short index key".into()))?;
    for &c in &ix.columns {
        let ty = types
            .get(c)
            .ok_or_else(|| SqlError::Internal("index column out of table".into()))?;
        key::decode(&mut rest, *ty)?;
    }
    Ok(rest.to_vec())
}

/// Decodes the first column of an index or primary key (after the 5-byte prefix).
pub fn first_key_column(k: &[u8], ty: SqlType) -> SqlResult<Datum> {
    let mut rest = k
        .get(PREFIX_LEN..)
        .ok_or_else(|| SqlError::Internal("short key".into()))?;
    Ok(key::decode(&mut rest, ty)?)
}

/// Decodes a stored row. (ALTER TABLE ADD COLUMN does not exist yet, so every stored row has
/// the table's full width.)
pub fn decode_row(table: &Table, bytes: &[u8]) -> SqlResult<Vec<Datum>> {
    Ok(row::decode_row(bytes, &table.types)?)
}

/// Decodes a stored row into `out` (reusing its allocation), keeping only the columns in
/// `columns` (ascending indexes; `None`: all of them); the others are `Null` (see
/// [`row::decode_projected_into`] for what `out` must hold between calls).
pub fn decode_row_columns_into(
    table: &Table,
    bytes: &[u8],
    columns: Option<&[usize]>,
    out: &mut Vec<Datum>,
) -> SqlResult<()> {
    match columns {
        Some(wanted) => Ok(row::decode_projected_into(
            bytes,
            &table.types,
            wanted,
            out,
        )?),
        None => Ok(row::decode_row_into(bytes, &table.types, out)?),
    }
}

/// Encodes a row.
pub fn encode_row(table: &Table, row: &[Datum]) -> SqlResult<Vec<u8>> {
    Ok(row::encode_row(row, &table.types)?)
}

/// Adds the entries of a new index over all existing rows (as of now) to `batch`, failing with
/// 1062 if a unique index would hold a duplicate.
pub fn build_index(
    catalog: &Catalog,
    def: &TableDef,
    ix: &IndexDef,
    batch: &mut WriteBatch,
) -> SqlResult<()> {
    let types = def.types();
    let snap = catalog.engine_snapshot();
    let prefix = key::row_prefix(def.id);
    let mut seen = std::collections::HashSet::new();
    for item in snap.prefix(catalog.data(), &prefix) {
        let (k, v) = item?;
        let values = row::decode_row(&v, &types)?;
        let pk_enc = k.get(PREFIX_LEN..).unwrap_or_default();
        let (ik, iv) = index_entry(ix, &types, &values, pk_enc)?;
        if ix.unique && !seen.insert(ik.clone()) {
            let shown: Vec<String> = ix
                .columns
                .iter()
                .filter_map(|c| values.get(*c))
                .map(crate::value::display)
                .collect();
            return Err(SqlError::DuplicateEntry {
                value: shown.join("-"),
                key: format!("{}.{}", def.name, ix.name),
            });
        }
        batch.put(catalog.data(), ik, iv)?;
    }
    Ok(())
}
