//! SHOW CREATE TABLE and SHOW CREATE DATABASE: the DDL text MySQL 8.0 prints for a catalog
//! entry — backquoted names, types as MySQL spells them (`int NOT NULL AUTO_INCREMENT`,
//! `char(120) NOT NULL DEFAULT ''`), keys in MySQL's order, then
//! `) ENGINE=InnoDB [AUTO_INCREMENT=n] DEFAULT CHARSET=… [COLLATE=…] [COMMENT='…']`.
//!
//! Invariants: the text re-creates the same table when executed (every attribute the catalog
//! records is printed); identifiers double embedded backquotes and string literals are escaped
//! as MySQL's `append_unescaped` does.

use super::output::{ShowOutput, column, name_column};
use crate::catalog::{CatalogSnapshot, ColumnDef};
use crate::error::{SqlError, SqlResult};
use crate::information_schema::charsets;
use crate::information_schema::is_information_schema;
use crate::information_schema::metadata;
use crate::information_schema::rows::{self, DescribedTable, text};
use crate::types::{Datum, SqlType};
use std::fmt::Write;

/// `name` as a MySQL quoted identifier.
#[must_use]
pub fn quote_identifier(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// `s` as a single-quoted MySQL string literal, escaped as SHOW CREATE prints it.
#[must_use]
pub fn quote_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for ch in s.chars() {
        match ch {
            '\0' => out.push_str("\\0"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\x1a' => out.push_str("\\Z"),
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

fn column_line(col: &ColumnDef) -> String {
    let mut line = format!("  {} {}", quote_identifier(&col.name), col.ty.sql_name());
    if col.nullable {
        // explicit_defaults_for_timestamp: MySQL spells out NULL for nullable TIMESTAMPs.
        if col.ty == SqlType::Timestamp {
            line.push_str(" NULL");
        }
    } else {
        line.push_str(" NOT NULL");
    }
    match &col.default {
        None if col.default_now => line.push_str(" DEFAULT CURRENT_TIMESTAMP"),
        None => {}
        // BLOB and TEXT columns cannot have a default; MySQL prints none for them.
        Some(Datum::Null) if matches!(col.ty, SqlType::Text | SqlType::Blob) => {}
        Some(Datum::Null) => line.push_str(" DEFAULT NULL"),
        Some(_) => {
            if let Some(d) = metadata::default_text(col) {
                let _ = write!(line, " DEFAULT {}", quote_string(&d));
            }
        }
    }
    if col.auto_increment {
        line.push_str(" AUTO_INCREMENT");
    }
    line
}

/// The charset clause: `DEFAULT CHARSET=cs [COLLATE=coll]` for tables, `DEFAULT CHARACTER SET
/// cs [COLLATE coll]` for databases. MySQL prints the collation when it is not the charset's
/// default, and always for utf8mb4 (whose default changed in 8.0).
fn charset_clause(charset: &str, collation: Option<&str>, for_table: bool) -> String {
    let mut out = if for_table {
        format!("DEFAULT CHARSET={charset}")
    } else {
        format!("DEFAULT CHARACTER SET {charset}")
    };
    if let Some(coll) = collation {
        let is_default = charsets::charset(charset).is_some_and(|c| c.default_collation == coll);
        if !is_default || charset == charsets::DEFAULT_CHARSET {
            let _ = write!(out, " COLLATE{}{coll}", if for_table { "=" } else { " " });
        }
    }
    out
}

/// The CREATE TABLE text of a base table.
pub fn create_table_text(t: &DescribedTable) -> SqlResult<String> {
    if t.system_view {
        return Err(SqlError::unsupported(
            "SHOW CREATE TABLE of an information_schema view",
        ));
    }
    let def = &t.def;
    let mut lines: Vec<String> = def.columns.iter().map(column_line).collect();
    for key in metadata::ordered_keys(def) {
        let cols = key
            .columns
            .iter()
            .map(|c| {
                def.columns
                    .get(*c)
                    .map(|col| quote_identifier(&col.name))
                    .ok_or_else(|| {
                        SqlError::Internal(format!("key {} names a missing column", key.name))
                    })
            })
            .collect::<SqlResult<Vec<_>>>()?
            .join(",");
        lines.push(if key.primary {
            format!("  PRIMARY KEY ({cols})")
        } else if key.unique {
            format!("  UNIQUE KEY {} ({cols})", quote_identifier(key.name))
        } else {
            format!("  KEY {} ({cols})", quote_identifier(key.name))
        });
    }
    let mut out = format!(
        "CREATE TABLE {} (\n{}\n) ENGINE={}",
        quote_identifier(&def.name),
        lines.join(",\n"),
        def.options.engine
    );
    if let Some(next) = t.next_auto_increment.filter(|n| *n > 1) {
        let _ = write!(out, " AUTO_INCREMENT={next}");
    }
    let (charset, collation) = t.charset();
    let _ = write!(
        out,
        " {}",
        charset_clause(&charset, collation.as_deref(), true)
    );
    if let Some(comment) = def.options.comment.as_deref().filter(|c| !c.is_empty()) {
        let _ = write!(out, " COMMENT={}", quote_string(comment));
    }
    Ok(out)
}

/// SHOW CREATE TABLE.
pub fn show_create_table(t: &DescribedTable) -> SqlResult<ShowOutput> {
    let mut out = ShowOutput::new(vec![
        name_column("Table", false),
        column("Create Table", SqlType::Varchar { len: 1024 }, false),
    ]);
    out.rows
        .push(vec![text(&t.def.name), text(&create_table_text(t)?)]);
    Ok(out)
}

/// SHOW CREATE {DATABASE | SCHEMA} [IF NOT EXISTS] db.
pub fn show_create_database(
    snap: &CatalogSnapshot,
    db: &str,
    if_not_exists: bool,
) -> SqlResult<ShowOutput> {
    if !is_information_schema(db) && !snap.dbs.contains_key(db) {
        return Err(SqlError::UnknownDatabase(db.to_string()));
    }
    let (charset, collation) = rows::database_charset(db);
    let shown_name = if is_information_schema(db) {
        crate::information_schema::INFORMATION_SCHEMA
    } else {
        db
    };
    let text_value = format!(
        "CREATE DATABASE {}{} /*!40100 {} */ /*!80016 DEFAULT ENCRYPTION='N' */",
        if if_not_exists {
            "/*!32312 IF NOT EXISTS*/ "
        } else {
            ""
        },
        quote_identifier(shown_name),
        charset_clause(charset, Some(collation), false),
    );
    let mut out = ShowOutput::new(vec![
        name_column("Database", false),
        column("Create Database", SqlType::Varchar { len: 1024 }, false),
    ]);
    out.rows.push(vec![text(shown_name), text(&text_value)]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(ty: SqlType, nullable: bool, default: Option<Datum>) -> ColumnDef {
        ColumnDef {
            name: "x".into(),
            ty,
            nullable,
            default,
            auto_increment: false,
            default_now: false,
        }
    }

    #[test]
    fn column_lines_print_defaults_as_mysql() {
        let cases = [
            (
                col(SqlType::Int { unsigned: false }, true, Some(Datum::Int(-5))),
                "int DEFAULT '-5'",
            ),
            (
                col(SqlType::Double, false, Some(Datum::Double(1.5))),
                "double NOT NULL DEFAULT '1.5'",
            ),
            (
                col(SqlType::Date, true, Some(Datum::Date(0))),
                "date DEFAULT '1970-01-01'",
            ),
            (col(SqlType::DateTime, false, None), "datetime NOT NULL"),
            (
                col(SqlType::Timestamp, true, Some(Datum::Null)),
                "timestamp NULL DEFAULT NULL",
            ),
            (col(SqlType::Blob, true, Some(Datum::Null)), "blob"),
            (
                col(
                    SqlType::Varchar { len: 5 },
                    true,
                    Some(Datum::Bytes(b"a'b\\".to_vec())),
                ),
                "varchar(5) DEFAULT 'a\\'b\\\\'",
            ),
        ];
        for (c, expected) in cases {
            assert_eq!(column_line(&c), format!("  `x` {expected}"));
        }
    }

    #[test]
    fn quoting() {
        assert_eq!(quote_identifier("a`b"), "`a``b`");
        assert_eq!(quote_string("x\n\0\r\x1a"), "'x\\n\\0\\r\\Z'");
        assert_eq!(
            charset_clause("latin1", Some("latin1_bin"), true),
            "DEFAULT CHARSET=latin1 COLLATE=latin1_bin"
        );
        assert_eq!(
            charset_clause("utf8mb3", Some("utf8mb3_general_ci"), false),
            "DEFAULT CHARACTER SET utf8mb3"
        );
    }
}
