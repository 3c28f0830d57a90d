//! SHOW DATABASES, SHOW [FULL] TABLES, SHOW [FULL] COLUMNS / DESCRIBE, SHOW INDEX and SHOW TABLE
//! STATUS. As in MySQL 8.0, each is a projection of an information_schema view under the names
//! SHOW uses, so SHOW and information_schema always agree.
//!
//! Invariants: unknown database → 1049, unknown table → 1146, no current database where one is
//! needed → 1046; rows keep the views' order (names sorted, columns in table order, keys in
//! MySQL's key order).

use super::output::{ShowFilter, ShowOutput, column, name_column};
use crate::catalog::CatalogSnapshot;
use crate::error::{SqlError, SqlResult};
use crate::information_schema::rows::{self, DescribedTable, text};
use crate::information_schema::{INFORMATION_SCHEMA, SystemView, is_information_schema};
use crate::types::{Datum, SqlType};

/// Picks the named columns of `view` out of its rows, and returns them as SHOW columns renamed
/// `(show name, view column)`.
pub(super) fn project(
    view: SystemView,
    rows: Vec<Vec<Datum>>,
    names: &[(&str, &str)],
) -> SqlResult<ShowOutput> {
    let mut positions = Vec::with_capacity(names.len());
    let mut columns = Vec::with_capacity(names.len());
    for (shown, source) in names {
        let (pos, col) = view
            .columns()
            .iter()
            .enumerate()
            .find(|(_, c)| c.name == *source)
            .ok_or_else(|| SqlError::Internal(format!("no column {source} in {}", view.name())))?;
        positions.push(pos);
        columns.push(column(shown, col.ty, col.nullable));
    }
    let rows = rows
        .into_iter()
        .map(|row| {
            positions
                .iter()
                .map(|&p| row.get(p).cloned().unwrap_or(Datum::Null))
                .collect()
        })
        .collect();
    Ok(ShowOutput { columns, rows })
}

/// The database a SHOW reads: the named one or the current one.
fn database<'a>(named: Option<&'a str>, current_db: Option<&'a str>) -> SqlResult<&'a str> {
    named.or(current_db).ok_or(SqlError::NoDatabaseSelected)
}

/// Resolves `[db.]table` (as parts) against the current database.
pub fn resolve_table(
    snap: &CatalogSnapshot,
    parts: &[String],
    current_db: Option<&str>,
) -> SqlResult<DescribedTable> {
    match parts {
        [t] => rows::table(snap, database(None, current_db)?, t),
        [d, t] => rows::table(snap, d, t),
        _ => Err(SqlError::Parse(parts.join("."))),
    }
}

/// SHOW DATABASES [LIKE | WHERE].
pub fn show_databases(
    snap: &CatalogSnapshot,
    filter: Option<ShowFilter<'_>>,
) -> SqlResult<ShowOutput> {
    let mut out = ShowOutput::new(vec![name_column("Database", false)]);
    out.rows = rows::database_names(snap)
        .iter()
        .map(|db| vec![text(db)])
        .collect();
    out.filter(filter, true)
}

/// SHOW [FULL] TABLES [FROM db] [LIKE | WHERE].
pub fn show_tables(
    snap: &CatalogSnapshot,
    named_db: Option<&str>,
    current_db: Option<&str>,
    full: bool,
    filter: Option<ShowFilter<'_>>,
) -> SqlResult<ShowOutput> {
    let db = database(named_db, current_db)?;
    let tables = rows::tables_of(snap, db)?;
    let shown_db = if is_information_schema(db) {
        INFORMATION_SCHEMA
    } else {
        db
    };
    let mut columns = vec![name_column(&format!("Tables_in_{shown_db}"), false)];
    if full {
        columns.push(column("Table_type", SqlType::Varchar { len: 11 }, false));
    }
    let mut out = ShowOutput::new(columns);
    out.rows = tables
        .iter()
        .map(|t| {
            let mut row = vec![text(&t.def.name)];
            if full {
                row.push(text(t.table_type()));
            }
            row
        })
        .collect();
    out.filter(filter, true)
}

/// SHOW [FULL] COLUMNS FROM t [FROM db] [LIKE | WHERE], and DESCRIBE t.
pub fn show_columns(
    table: &DescribedTable,
    full: bool,
    filter: Option<ShowFilter<'_>>,
) -> SqlResult<ShowOutput> {
    let names: &[(&str, &str)] = if full {
        &[
            ("Field", "COLUMN_NAME"),
            ("Type", "COLUMN_TYPE"),
            ("Collation", "COLLATION_NAME"),
            ("Null", "IS_NULLABLE"),
            ("Key", "COLUMN_KEY"),
            ("Default", "COLUMN_DEFAULT"),
            ("Extra", "EXTRA"),
            ("Privileges", "PRIVILEGES"),
            ("Comment", "COLUMN_COMMENT"),
        ]
    } else {
        &[
            ("Field", "COLUMN_NAME"),
            ("Type", "COLUMN_TYPE"),
            ("Null", "IS_NULLABLE"),
            ("Key", "COLUMN_KEY"),
            ("Default", "COLUMN_DEFAULT"),
            ("Extra", "EXTRA"),
        ]
    };
    project(SystemView::Columns, rows::columns_rows(table), names)?.filter(filter, false)
}

/// SHOW {INDEX | INDEXES | KEYS} FROM t [FROM db] [WHERE]: MySQL 8.0's 15 columns.
pub fn show_index(table: &DescribedTable, filter: Option<ShowFilter<'_>>) -> SqlResult<ShowOutput> {
    project(
        SystemView::Statistics,
        rows::statistics_rows(table),
        &[
            ("Table", "TABLE_NAME"),
            ("Non_unique", "NON_UNIQUE"),
            ("Key_name", "INDEX_NAME"),
            ("Seq_in_index", "SEQ_IN_INDEX"),
            ("Column_name", "COLUMN_NAME"),
            ("Collation", "COLLATION"),
            ("Cardinality", "CARDINALITY"),
            ("Sub_part", "SUB_PART"),
            ("Packed", "PACKED"),
            ("Null", "NULLABLE"),
            ("Index_type", "INDEX_TYPE"),
            ("Comment", "COMMENT"),
            ("Index_comment", "INDEX_COMMENT"),
            ("Visible", "IS_VISIBLE"),
            ("Expression", "EXPRESSION"),
        ],
    )?
    .filter(filter, false)
}

/// SHOW TABLE STATUS [FROM db] [LIKE | WHERE]. Statistics the engine does not keep are NULL.
pub fn show_table_status(
    snap: &CatalogSnapshot,
    named_db: Option<&str>,
    current_db: Option<&str>,
    filter: Option<ShowFilter<'_>>,
) -> SqlResult<ShowOutput> {
    let db = database(named_db, current_db)?;
    let table_rows = rows::tables_of(snap, db)?
        .iter()
        .map(rows::tables_row)
        .collect();
    project(
        SystemView::Tables,
        table_rows,
        &[
            ("Name", "TABLE_NAME"),
            ("Engine", "ENGINE"),
            ("Version", "VERSION"),
            ("Row_format", "ROW_FORMAT"),
            ("Rows", "TABLE_ROWS"),
            ("Avg_row_length", "AVG_ROW_LENGTH"),
            ("Data_length", "DATA_LENGTH"),
            ("Max_data_length", "MAX_DATA_LENGTH"),
            ("Index_length", "INDEX_LENGTH"),
            ("Data_free", "DATA_FREE"),
            ("Auto_increment", "AUTO_INCREMENT"),
            ("Create_time", "CREATE_TIME"),
            ("Update_time", "UPDATE_TIME"),
            ("Check_time", "CHECK_TIME"),
            ("Collation", "TABLE_COLLATION"),
            ("Checksum", "CHECKSUM"),
            ("Create_options", "CREATE_OPTIONS"),
            ("Comment", "TABLE_COMMENT"),
        ],
    )?
    .filter(filter, false)
}
