//! The rows of the information_schema views, computed from one catalog snapshot: every database
//! (information_schema included), every table and every view of information_schema itself.
//!
//! Invariants: rows are built in the column order of `views.rs`; statistics the engine does not
//! keep (row counts, data sizes, cardinality, creation times) are NULL rather than invented;
//! databases are listed in name order, tables in name order within their database.

use super::charsets::{self, DEFAULT_CHARSET};
use super::metadata::{self, COLUMN_PRIVILEGES};
use super::views::{INFORMATION_SCHEMA, SystemView, VIEW_CHARSET, is_information_schema};
use crate::catalog::{CatalogSnapshot, TableDef};
use crate::error::{SqlError, SqlResult};
use crate::types::Datum;
use std::sync::atomic::Ordering;

/// `TABLE_CATALOG` / `CATALOG_NAME` of every row.
const CATALOG: &str = "def";
/// InnoDB's table version and row format as MySQL 8.0 reports them.
const TABLE_VERSION: i64 = 10;
const ROW_FORMAT: &str = "Dynamic";

/// A string datum.
pub fn text(s: &str) -> Datum {
    Datum::Bytes(s.as_bytes().to_vec())
}

/// A string datum or NULL.
pub fn opt_text(s: Option<&str>) -> Datum {
    s.map_or(Datum::Null, text)
}

/// An unsigned datum (as `Int` while it fits, the crate's convention) or NULL.
pub fn opt_uint(v: Option<u64>) -> Datum {
    match v {
        None => Datum::Null,
        Some(v) => i64::try_from(v).map_or(Datum::UInt(v), Datum::Int),
    }
}

/// One table as the views describe it.
#[derive(Debug, Clone)]
pub struct DescribedTable {
    pub def: TableDef,
    /// Next AUTO_INCREMENT value, for base tables with an AUTO_INCREMENT column.
    pub next_auto_increment: Option<u64>,
    /// True for the views of information_schema.
    pub system_view: bool,
}

impl DescribedTable {
    /// `TABLE_TYPE`.
    #[must_use]
    pub fn table_type(&self) -> &'static str {
        if self.system_view {
            "SYSTEM VIEW"
        } else {
            "BASE TABLE"
        }
    }

    /// The table's character set and collation.
    #[must_use]
    pub fn charset(&self) -> (String, Option<String>) {
        charsets::table_charset(&self.def.options)
    }
}

/// Every database name, information_schema included, in name order.
#[must_use]
pub fn database_names(snap: &CatalogSnapshot) -> Vec<String> {
    let mut names: Vec<String> = snap.dbs.keys().cloned().collect();
    names.push(INFORMATION_SCHEMA.to_string());
    names.sort();
    names
}

/// The tables of database `db` in name order; error 1049 if it does not exist.
pub fn tables_of(snap: &CatalogSnapshot, db: &str) -> SqlResult<Vec<DescribedTable>> {
    if is_information_schema(db) {
        let mut views: Vec<DescribedTable> = SystemView::ALL
            .into_iter()
            .map(|v| DescribedTable {
                def: v.table_def(),
                next_auto_increment: None,
                system_view: true,
            })
            .collect();
        views.sort_by(|a, b| a.def.name.cmp(&b.def.name));
        return Ok(views);
    }
    let tables = snap
        .dbs
        .get(db)
        .ok_or_else(|| SqlError::UnknownDatabase(db.to_string()))?;
    Ok(tables
        .values()
        .map(|t| DescribedTable {
            def: t.def.clone(),
            next_auto_increment: t
                .def
                .auto_increment_column()
                .map(|_| t.next_auto.load(Ordering::SeqCst)),
            system_view: false,
        })
        .collect())
}

/// Table `db.name`: 1049 for an unknown database, 1146 for an unknown table.
pub fn table(snap: &CatalogSnapshot, db: &str, name: &str) -> SqlResult<DescribedTable> {
    let missing = || SqlError::NoSuchTable {
        db: db.to_string(),
        table: name.to_string(),
    };
    if is_information_schema(db) {
        let view = SystemView::lookup(name).ok_or_else(missing)?;
        return Ok(DescribedTable {
            def: view.table_def(),
            next_auto_increment: None,
            system_view: true,
        });
    }
    let t = snap.table(db, name)?;
    Ok(DescribedTable {
        next_auto_increment: t
            .def
            .auto_increment_column()
            .map(|_| t.next_auto.load(Ordering::SeqCst)),
        def: t.def.clone(),
        system_view: false,
    })
}

fn all_tables(snap: &CatalogSnapshot) -> SqlResult<Vec<DescribedTable>> {
    let mut out = Vec::new();
    for db in database_names(snap) {
        out.extend(tables_of(snap, &db)?);
    }
    Ok(out)
}

/// The rows of `view`.
pub fn view_rows(view: SystemView, snap: &CatalogSnapshot) -> SqlResult<Vec<Vec<Datum>>> {
    Ok(match view {
        // The sessions are not in the catalog: a session supplies these rows
        // (`query::execute_query_with`); any other path is refused rather than shown empty.
        SystemView::Processlist => {
            return Err(SqlError::unsupported(
                "information_schema.PROCESSLIST outside a client session",
            ));
        }
        SystemView::Schemata => database_names(snap)
            .iter()
            .map(|db| schemata_row(db))
            .collect(),
        SystemView::Tables => all_tables(snap)?.iter().map(tables_row).collect(),
        SystemView::Columns => all_tables(snap)?.iter().flat_map(columns_rows).collect(),
        SystemView::Statistics => all_tables(snap)?.iter().flat_map(statistics_rows).collect(),
        SystemView::TableConstraints => all_tables(snap)?
            .iter()
            .flat_map(table_constraints_rows)
            .collect(),
        SystemView::KeyColumnUsage => all_tables(snap)?
            .iter()
            .flat_map(key_column_usage_rows)
            .collect(),
        SystemView::CharacterSets => charsets::CHARSETS
            .iter()
            .map(|c| {
                vec![
                    text(c.name),
                    text(c.default_collation),
                    text(c.description),
                    Datum::Int(i64::from(c.max_len)),
                ]
            })
            .collect(),
        SystemView::Collations => charsets::COLLATIONS
            .iter()
            .map(|c| {
                vec![
                    text(c.name),
                    text(c.charset),
                    Datum::Int(i64::from(c.id)),
                    text(if c.is_default { "Yes" } else { "" }),
                    text("Yes"),
                    Datum::Int(i64::from(c.sort_len)),
                    text(c.pad_attribute),
                ]
            })
            .collect(),
        SystemView::Engines => vec![engine_row()],
    })
}

/// The default character set and collation of database `db` (databases record no options yet:
/// information_schema is utf8mb3, every other database MySQL 8.0's default).
#[must_use]
pub fn database_charset(db: &str) -> (&'static str, &'static str) {
    let cs = if is_information_schema(db) {
        VIEW_CHARSET
    } else {
        DEFAULT_CHARSET
    };
    let coll = charsets::charset(cs).map_or("", |c| c.default_collation);
    (cs, coll)
}

fn schemata_row(db: &str) -> Vec<Datum> {
    let (cs, coll) = database_charset(db);
    vec![
        text(CATALOG),
        text(db),
        text(cs),
        text(coll),
        Datum::Null,
        text("NO"),
    ]
}

/// A row of information_schema.TABLES.
#[must_use]
pub fn tables_row(t: &DescribedTable) -> Vec<Datum> {
    let def = &t.def;
    let (_, collation) = t.charset();
    let base = !t.system_view;
    vec![
        text(CATALOG),
        text(&def.db),
        text(&def.name),
        text(t.table_type()),
        if base {
            text(&def.options.engine)
        } else {
            Datum::Null
        },
        Datum::Int(TABLE_VERSION),
        if base { text(ROW_FORMAT) } else { Datum::Null },
        Datum::Null,
        Datum::Null,
        Datum::Null,
        Datum::Null,
        Datum::Null,
        Datum::Null,
        opt_uint(t.next_auto_increment),
        Datum::Null,
        Datum::Null,
        Datum::Null,
        if base {
            opt_text(collation.as_deref())
        } else {
            Datum::Null
        },
        Datum::Null,
        text(""),
        text(def.options.comment.as_deref().unwrap_or("")),
    ]
}

/// The rows of information_schema.COLUMNS for one table.
#[must_use]
pub fn columns_rows(t: &DescribedTable) -> Vec<Vec<Datum>> {
    let def = &t.def;
    let (cs, collation) = t.charset();
    let bytes_per_char = charsets::charset(&cs).map_or(4, |c| c.max_len);
    def.columns
        .iter()
        .enumerate()
        .map(|(i, col)| {
            let charset_facets = metadata::has_charset(col.ty);
            vec![
                text(CATALOG),
                text(&def.db),
                text(&def.name),
                text(&col.name),
                opt_uint(u64::try_from(i + 1).ok()),
                opt_text(metadata::default_text(col).as_deref()),
                text(if col.nullable { "YES" } else { "NO" }),
                text(metadata::data_type(col.ty)),
                opt_uint(metadata::character_maximum_length(col.ty)),
                opt_uint(metadata::character_octet_length(col.ty, bytes_per_char)),
                opt_uint(metadata::numeric_precision(col.ty)),
                opt_uint(metadata::numeric_scale(col.ty)),
                opt_uint(metadata::datetime_precision(col.ty)),
                if charset_facets {
                    text(&cs)
                } else {
                    Datum::Null
                },
                if charset_facets {
                    opt_text(collation.as_deref())
                } else {
                    Datum::Null
                },
                text(&col.ty.sql_name()),
                text(metadata::column_key(def, i)),
                text(metadata::extra(col)),
                text(COLUMN_PRIVILEGES),
                text(""),
                text(""),
                Datum::Null,
            ]
        })
        .collect()
}

/// The rows of information_schema.STATISTICS for one table: one per key column, keys in
/// MySQL's order.
#[must_use]
pub fn statistics_rows(t: &DescribedTable) -> Vec<Vec<Datum>> {
    let def = &t.def;
    let mut rows = Vec::new();
    for key in metadata::ordered_keys(def) {
        for (seq, &c) in key.columns.iter().enumerate() {
            let column = def.columns.get(c);
            rows.push(vec![
                text(CATALOG),
                text(&def.db),
                text(&def.name),
                Datum::Int(i64::from(!key.unique)),
                text(&def.db),
                text(key.name),
                opt_uint(u64::try_from(seq + 1).ok()),
                opt_text(column.map(|col| col.name.as_str())),
                text("A"),
                Datum::Null,
                Datum::Null,
                Datum::Null,
                text(if column.is_some_and(|col| col.nullable) {
                    "YES"
                } else {
                    ""
                }),
                text("BTREE"),
                text(""),
                text(""),
                text("YES"),
                Datum::Null,
            ]);
        }
    }
    rows
}

/// The one storage engine, as information_schema.ENGINES and SHOW ENGINES list it: tables are
/// created as InnoDB (the only ENGINE CREATE TABLE accepts); it has transactions, but neither XA
/// nor savepoints.
fn engine_row() -> Vec<Datum> {
    vec![
        text("InnoDB"),
        text("DEFAULT"),
        text("Orcinus LSM storage: transactions, row-level locking"),
        text("YES"),
        text("NO"),
        text("NO"),
    ]
}

/// The rows of information_schema.TABLE_CONSTRAINTS for one table: its PRIMARY KEY and UNIQUE
/// keys (the only constraints the catalog has).
#[must_use]
pub fn table_constraints_rows(t: &DescribedTable) -> Vec<Vec<Datum>> {
    let def = &t.def;
    metadata::ordered_keys(def)
        .into_iter()
        .filter(|k| k.unique)
        .map(|k| {
            vec![
                text(CATALOG),
                text(&def.db),
                text(k.name),
                text(&def.db),
                text(&def.name),
                text(if k.primary { "PRIMARY KEY" } else { "UNIQUE" }),
                text("YES"),
            ]
        })
        .collect()
}

/// The rows of information_schema.KEY_COLUMN_USAGE for one table: one per column of each
/// PRIMARY KEY / UNIQUE constraint (no foreign keys exist, so the REFERENCED_* columns are NULL).
#[must_use]
pub fn key_column_usage_rows(t: &DescribedTable) -> Vec<Vec<Datum>> {
    let def = &t.def;
    let mut rows = Vec::new();
    for key in metadata::ordered_keys(def).into_iter().filter(|k| k.unique) {
        for (seq, &c) in key.columns.iter().enumerate() {
            rows.push(vec![
                text(CATALOG),
                text(&def.db),
                text(key.name),
                text(CATALOG),
                text(&def.db),
                text(&def.name),
                opt_text(def.columns.get(c).map(|col| col.name.as_str())),
                opt_uint(u64::try_from(seq + 1).ok()),
                Datum::Null,
                Datum::Null,
                Datum::Null,
                Datum::Null,
            ]);
        }
    }
    rows
}
