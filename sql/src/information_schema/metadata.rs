//! How MySQL 8.0 describes a table's columns and keys, computed from a [`TableDef`]: the key
//! order of SHOW CREATE TABLE / SHOW INDEX, the `PRI` / `UNI` / `MUL` column keys, type names,
//! defaults and the numeric / character facets of information_schema.COLUMNS. SHOW statements
//! and the information_schema views both read these, so the two always agree.
//!
//! Invariants: keys are ordered as MySQL stores them (PRIMARY, then UNIQUE keys whose columns are
//! all NOT NULL, then other UNIQUE keys, then non-unique keys; declaration order within a class).
//! Without a declared PRIMARY KEY, the first UNIQUE key whose columns are all NOT NULL acts as the
//! primary key for `COLUMN_KEY` (as InnoDB promotes it), but keeps its own name.

use crate::catalog::{ColumnDef, TableDef};
use crate::types::{Datum, SqlType};
use crate::value;

/// Name MySQL gives the primary key.
pub const PRIMARY_KEY_NAME: &str = "PRIMARY";

/// One key of a table, primary key included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyView<'a> {
    pub name: &'a str,
    pub primary: bool,
    pub unique: bool,
    /// Positions of the key's columns in the table.
    pub columns: &'a [usize],
}

fn all_not_null(def: &TableDef, columns: &[usize]) -> bool {
    columns
        .iter()
        .all(|c| def.columns.get(*c).is_some_and(|col| !col.nullable))
}

/// The table's keys in MySQL's order; the hidden row id of a table without a primary key is not
/// a key a client sees.
#[must_use]
pub fn ordered_keys(def: &TableDef) -> Vec<KeyView<'_>> {
    let mut keys = Vec::with_capacity(def.indexes.len() + 1);
    if !def.primary_key.is_empty() {
        keys.push(KeyView {
            name: PRIMARY_KEY_NAME,
            primary: true,
            unique: true,
            columns: &def.primary_key,
        });
    }
    let class = |unique: bool, columns: &[usize]| match (unique, all_not_null(def, columns)) {
        (true, true) => 0,
        (true, false) => 1,
        (false, _) => 2,
    };
    let mut secondary: Vec<KeyView<'_>> = def
        .indexes
        .iter()
        .map(|ix| KeyView {
            name: &ix.name,
            primary: false,
            unique: ix.unique,
            columns: &ix.columns,
        })
        .collect();
    secondary.sort_by_key(|k| class(k.unique, k.columns));
    keys.extend(secondary);
    keys
}

/// The columns acting as primary key: the declared one, else the first UNIQUE key whose columns
/// are all NOT NULL.
#[must_use]
pub fn effective_primary_key(def: &TableDef) -> &[usize] {
    if !def.primary_key.is_empty() {
        return &def.primary_key;
    }
    ordered_keys(def)
        .into_iter()
        .find(|k| k.unique && all_not_null(def, k.columns))
        .map_or(&[], |k| k.columns)
}

/// `COLUMN_KEY` / the `Key` of SHOW COLUMNS: `PRI` for a primary-key column, `UNI` for the first
/// column of a single-column UNIQUE key, `MUL` for the first column of any other key, else "".
#[must_use]
pub fn column_key(def: &TableDef, column: usize) -> &'static str {
    let primary = effective_primary_key(def);
    if primary.contains(&column) {
        return "PRI";
    }
    let mut key = "";
    for ix in &def.indexes {
        if ix.columns.as_slice() == primary || ix.columns.first() != Some(&column) {
            continue;
        }
        if ix.unique && ix.columns.len() == 1 {
            return "UNI";
        }
        key = "MUL";
    }
    key
}

/// `DATA_TYPE`: the type name without length, precision or attributes.
#[must_use]
pub fn data_type(ty: SqlType) -> &'static str {
    match ty {
        SqlType::TinyInt { .. } => "tinyint",
        SqlType::SmallInt { .. } => "smallint",
        SqlType::Int { .. } => "int",
        SqlType::BigInt { .. } => "bigint",
        SqlType::Decimal { .. } => "decimal",
        SqlType::Double => "double",
        SqlType::Float => "float",
        SqlType::Char { .. } => "char",
        SqlType::Varchar { .. } => "varchar",
        SqlType::Text => "text",
        SqlType::Blob => "blob",
        SqlType::Date => "date",
        SqlType::DateTime => "datetime",
        SqlType::Timestamp => "timestamp",
    }
}

/// The default as text (SHOW COLUMNS `Default`, `COLUMN_DEFAULT`); `None` when there is none or
/// it is NULL, which MySQL shows alike.
#[must_use]
pub fn default_text(column: &ColumnDef) -> Option<String> {
    if column.default_now {
        return Some("CURRENT_TIMESTAMP".to_owned());
    }
    match &column.default {
        None | Some(Datum::Null) => None,
        Some(d) => Some(value::display(d)),
    }
}

/// `EXTRA`: `auto_increment`, `DEFAULT_GENERATED` (a `DEFAULT CURRENT_TIMESTAMP`) or "".
#[must_use]
pub fn extra(column: &ColumnDef) -> &'static str {
    if column.auto_increment {
        "auto_increment"
    } else if column.default_now {
        "DEFAULT_GENERATED"
    } else {
        ""
    }
}

/// The privileges column of SHOW FULL COLUMNS / information_schema.COLUMNS. Every session has
/// every privilege until accounts carry grants.
pub const COLUMN_PRIVILEGES: &str = "select,insert,update,references";

/// Maximum length in characters of a character column (`CHARACTER_MAXIMUM_LENGTH`), in bytes
/// for BLOB.
#[must_use]
pub fn character_maximum_length(ty: SqlType) -> Option<u64> {
    match ty {
        SqlType::Char { len } | SqlType::Varchar { len } => Some(u64::from(len)),
        SqlType::Text | SqlType::Blob => Some(65_535),
        _ => None,
    }
}

/// Maximum length in bytes (`CHARACTER_OCTET_LENGTH`) given the charset's bytes per character.
#[must_use]
pub fn character_octet_length(ty: SqlType, max_bytes_per_char: u32) -> Option<u64> {
    match ty {
        SqlType::Char { len } | SqlType::Varchar { len } => {
            Some(u64::from(len) * u64::from(max_bytes_per_char))
        }
        SqlType::Text | SqlType::Blob => Some(65_535),
        _ => None,
    }
}

/// `NUMERIC_PRECISION`.
#[must_use]
pub fn numeric_precision(ty: SqlType) -> Option<u64> {
    match ty {
        SqlType::TinyInt { .. } => Some(3),
        SqlType::SmallInt { .. } => Some(5),
        SqlType::Int { .. } => Some(10),
        SqlType::BigInt { unsigned } => Some(if unsigned { 20 } else { 19 }),
        SqlType::Decimal { precision, .. } => Some(u64::from(precision)),
        SqlType::Float => Some(12),
        SqlType::Double => Some(22),
        _ => None,
    }
}

/// `NUMERIC_SCALE` (NULL for floating point, as MySQL reports it without a declared scale).
#[must_use]
pub fn numeric_scale(ty: SqlType) -> Option<u64> {
    match ty {
        SqlType::Decimal { scale, .. } => Some(u64::from(scale)),
        t if t.is_integer() => Some(0),
        _ => None,
    }
}

/// `DATETIME_PRECISION` (fractional-second digits; 0 as no fractional seconds are stored).
#[must_use]
pub fn datetime_precision(ty: SqlType) -> Option<u64> {
    match ty {
        SqlType::DateTime | SqlType::Timestamp => Some(0),
        _ => None,
    }
}

/// True for columns that carry a character set (CHAR, VARCHAR, TEXT).
#[must_use]
pub fn has_charset(ty: SqlType) -> bool {
    ty.is_text()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{IndexDef, TableOptions};

    fn col(name: &str, nullable: bool) -> ColumnDef {
        ColumnDef {
            name: name.into(),
            ty: SqlType::Int { unsigned: false },
            nullable,
            default: None,
            auto_increment: false,
            default_now: false,
        }
    }

    fn ix(name: &str, columns: Vec<usize>, unique: bool) -> IndexDef {
        IndexDef {
            id: 0,
            name: name.into(),
            columns,
            unique,
        }
    }

    fn table(primary_key: Vec<usize>, indexes: Vec<IndexDef>) -> TableDef {
        TableDef {
            id: 1,
            db: "d".into(),
            name: "t".into(),
            columns: vec![
                col("a", false),
                col("b", true),
                col("c", false),
                col("d", true),
            ],
            primary_key,
            indexes,
            options: TableOptions::default(),
        }
    }

    #[test]
    fn keys_are_ordered_primary_unique_not_null_unique_other() {
        let t = table(
            vec![0],
            vec![
                ix("plain", vec![1], false),
                ix("u_nullable", vec![1], true),
                ix("u_not_null", vec![2], true),
            ],
        );
        let names: Vec<_> = ordered_keys(&t).iter().map(|k| k.name).collect();
        assert_eq!(names, ["PRIMARY", "u_not_null", "u_nullable", "plain"]);
    }

    #[test]
    fn column_keys() {
        let t = table(
            vec![0],
            vec![
                ix("m", vec![1, 2], true),
                ix("u", vec![2], true),
                ix("k", vec![3], false),
            ],
        );
        let keys: Vec<_> = (0..4).map(|c| column_key(&t, c)).collect();
        assert_eq!(keys, ["PRI", "MUL", "UNI", "MUL"]);
    }

    #[test]
    fn unique_not_null_key_acts_as_primary_without_one() {
        let t = table(
            vec![],
            vec![ix("k", vec![1], false), ix("u", vec![2], true)],
        );
        assert_eq!(effective_primary_key(&t), &[2]);
        assert_eq!(column_key(&t, 2), "PRI");
        assert_eq!(column_key(&t, 1), "MUL");
        let nullable_unique = table(vec![], vec![ix("u", vec![1], true)]);
        assert!(effective_primary_key(&nullable_unique).is_empty());
        assert_eq!(column_key(&nullable_unique, 1), "UNI");
    }
}
