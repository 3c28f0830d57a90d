//! SHOW statements and information_schema queries, answered from the persistent catalog.
//!
//! Entry points for the statement dispatcher (the only ones it needs):
//! - [`execute_show_text`]`(snapshot, current_db, sql)` — call FIRST with the statement text:
//!   it claims the SHOW forms the parser cannot represent losslessly (SHOW CREATE DATABASE,
//!   SHOW INDEX … WHERE, SHOW TABLE STATUS LIKE …, SHOW ENGINES) and returns `None` for all other
//!   text (cheaply: only text starting with SHOW is tokenized).
//! - [`execute_show`]`(snapshot, current_db, stmt, params)` — call with each parsed statement:
//!   `Some(result)` for SHOW DATABASES / TABLES / COLUMNS / CREATE TABLE / INDEX / TABLE STATUS /
//!   ENGINES / COLLATION / CHARACTER SET, DESCRIBE t, and SELECTs over an information_schema
//!   view; `None` for every other statement (including SHOW VARIABLES / STATUS / WARNINGS, which
//!   the session layer answers). `params` are the `?` values of a prepared statement.
//! - [`describe_show`] gives result columns and parameter count at COM_STMT_PREPARE.
//!
//! Invariants: results are computed from one catalog snapshot and need no transaction (the
//! caller must not open one for them); every clause MySQL would honour is honoured or refused
//! with 1235 naming it (TERSE, HISTORY, ILIKE, STARTS WITH, LIMIT on SHOW, …); unknown database
//! → 1049, unknown table → 1146, no database selected → 1046.

mod create;
mod extension;
mod listing;
mod output;
mod server;

pub use create::{create_table_text, quote_identifier, quote_string};

use crate::bind::object_name_parts;
use crate::catalog::CatalogSnapshot;
use crate::error::{SqlError, SqlResult};
use crate::information_schema;
use crate::result::{OutputColumn, StatementResult};
use crate::types::Datum;
use datafusion::sql::sqlparser::ast::{
    DescribeAlias, ShowCharset, ShowCreateObject, ShowStatementFilterPosition, ShowStatementIn,
    ShowStatementInParentType, ShowStatementOptions, Statement,
};
use extension::{ExtensionFilter, ShowExtension};
use output::{ShowFilter, ShowOutput};

/// Runs a SHOW form that the parser cannot represent (see the module docs); `None` if `sql` is
/// not one.
#[must_use]
pub fn execute_show_text(
    snap: &CatalogSnapshot,
    current_db: Option<&str>,
    sql: &str,
) -> Option<SqlResult<StatementResult>> {
    if !starts_with_show(sql) {
        return None;
    }
    let ext = extension::from_text(sql)?;
    Some(
        ext.and_then(|e| run_extension(snap, current_db, &e))
            .map(ShowOutput::into_result),
    )
}

/// True if the first word after leading whitespace and comments is SHOW (a cheap pre-check
/// before tokenizing).
fn starts_with_show(sql: &str) -> bool {
    let mut rest = sql.trim_start();
    loop {
        if let Some(after) = rest.strip_prefix("/*") {
            match after.find("*/") {
                Some(end) => rest = after.get(end + 2..).unwrap_or_default().trim_start(),
                None => return false,
            }
        } else if rest.starts_with("--") || rest.starts_with('#') {
            match rest.find('\n') {
                Some(end) => rest = rest.get(end + 1..).unwrap_or_default().trim_start(),
                None => return false,
            }
        } else {
            break;
        }
    }
    rest.get(..4)
        .is_some_and(|w| w.eq_ignore_ascii_case("show"))
}

/// Runs a SHOW statement, DESCRIBE, or a SELECT over information_schema; `None` for any other
/// statement.
#[must_use]
pub fn execute_show(
    snap: &CatalogSnapshot,
    current_db: Option<&str>,
    stmt: &Statement,
    params: &[Datum],
) -> Option<SqlResult<StatementResult>> {
    if let Statement::Query(q) = stmt {
        return information_schema::execute_query(snap, current_db, q, params);
    }
    let out = show_statement(snap, current_db, stmt)?;
    Some(out.and_then(|o| {
        if params.is_empty() {
            Ok(o.into_result())
        } else {
            Err(SqlError::WrongArguments("mysqld_stmt_execute".into()))
        }
    }))
}

/// Result columns and parameter count of a statement [`execute_show`] runs (for
/// COM_STMT_PREPARE); `None` for any other statement.
#[must_use]
pub fn describe_show(
    snap: &CatalogSnapshot,
    current_db: Option<&str>,
    stmt: &Statement,
) -> Option<SqlResult<(Vec<OutputColumn>, usize)>> {
    if let Statement::Query(q) = stmt {
        return information_schema::describe_query(q, current_db);
    }
    let out = show_statement(snap, current_db, stmt)?;
    Some(out.map(|o| (o.columns, 0)))
}

fn run_extension(
    snap: &CatalogSnapshot,
    current_db: Option<&str>,
    ext: &ShowExtension,
) -> SqlResult<ShowOutput> {
    match ext {
        ShowExtension::CreateDatabase {
            name,
            if_not_exists,
        } => create::show_create_database(snap, name, *if_not_exists),
        ShowExtension::Index { table, filter } => {
            let t = listing::resolve_table(snap, table, current_db)?;
            listing::show_index(&t, filter.as_deref().map(ShowFilter::Where))
        }
        ShowExtension::TableStatus { db, filter } => {
            let filter = filter.as_ref().map(|f| match f {
                ExtensionFilter::Like(p) => ShowFilter::Like(p),
                ExtensionFilter::Where(e) => ShowFilter::Where(e),
            });
            listing::show_table_status(snap, db.as_deref(), current_db, filter)
        }
        ShowExtension::Engines => server::show_engines(snap),
    }
}

/// The `FROM … ` and filter of a SHOW, refusing the non-MySQL options.
fn split_options<'a>(
    options: &'a ShowStatementOptions,
    what: &str,
) -> SqlResult<(Option<&'a ShowStatementIn>, Option<ShowFilter<'a>>)> {
    let ShowStatementOptions {
        show_in,
        starts_with,
        limit,
        limit_from,
        filter_position,
    } = options;
    if starts_with.is_some() {
        return Err(SqlError::unsupported(format!("{what} STARTS WITH")));
    }
    if limit.is_some() || limit_from.is_some() {
        return Err(SqlError::unsupported(format!("{what} LIMIT")));
    }
    let filter = match filter_position {
        None => None,
        Some(ShowStatementFilterPosition::Infix(f) | ShowStatementFilterPosition::Suffix(f)) => {
            ShowFilter::from_ast(Some(f))?
        }
    };
    Ok((show_in.as_ref(), filter))
}

/// The name after `FROM` / `IN` as parts; a parent type (`IN DATABASE x`) is not MySQL syntax.
fn show_in_parts(show_in: &ShowStatementIn, what: &str) -> SqlResult<Vec<String>> {
    let ShowStatementIn {
        clause: _,
        parent_type,
        parent_name,
    } = show_in;
    if let Some(t) = parent_type {
        let kind = match t {
            ShowStatementInParentType::Account => "ACCOUNT",
            ShowStatementInParentType::Database => "DATABASE",
            ShowStatementInParentType::Schema => "SCHEMA",
            ShowStatementInParentType::Table => "TABLE",
            ShowStatementInParentType::View => "VIEW",
        };
        return Err(SqlError::unsupported(format!("{what} IN {kind}")));
    }
    let name = parent_name
        .as_ref()
        .ok_or_else(|| SqlError::Parse(format!("{what} {show_in}")))?;
    object_name_parts(name)
}

fn refuse(flags: &[(bool, &str)]) -> SqlResult<()> {
    match flags.iter().find(|(set, _)| *set) {
        Some((_, what)) => Err(SqlError::unsupported(*what)),
        None => Ok(()),
    }
}

fn show_statement(
    snap: &CatalogSnapshot,
    current_db: Option<&str>,
    stmt: &Statement,
) -> Option<SqlResult<ShowOutput>> {
    Some(match stmt {
        Statement::ShowDatabases {
            terse,
            history,
            show_options,
        }
        | Statement::ShowSchemas {
            terse,
            history,
            show_options,
        } => show_databases(snap, *terse, *history, show_options),
        Statement::ShowTables {
            terse,
            history,
            extended,
            full,
            external,
            show_options,
        } => refuse(&[
            (*terse, "SHOW TERSE TABLES"),
            (*history, "SHOW TABLES HISTORY"),
            (*extended, "SHOW EXTENDED TABLES"),
            (*external, "SHOW EXTERNAL TABLES"),
        ])
        .and_then(|()| show_tables(snap, current_db, *full, show_options)),
        Statement::ShowColumns {
            extended,
            full,
            show_options,
        } => refuse(&[(*extended, "SHOW EXTENDED COLUMNS")])
            .and_then(|()| show_columns(snap, current_db, *full, show_options)),
        Statement::ExplainTable {
            describe_alias,
            hive_format,
            has_table_keyword,
            table_name,
        } => {
            let alias = match describe_alias {
                DescribeAlias::Describe => "DESCRIBE",
                DescribeAlias::Explain => "EXPLAIN",
                DescribeAlias::Desc => "DESC",
            };
            refuse(&[
                (hive_format.is_some(), "DESCRIBE FORMATTED / EXTENDED"),
                (*has_table_keyword, alias),
            ])
            .and_then(|()| object_name_parts(table_name))
            .and_then(|parts| listing::resolve_table(snap, &parts, current_db))
            .and_then(|t| listing::show_columns(&t, false, None))
        }
        Statement::ShowCreate { obj_type, obj_name } => match obj_type {
            ShowCreateObject::Table => object_name_parts(obj_name)
                .and_then(|parts| listing::resolve_table(snap, &parts, current_db))
                .and_then(|t| create::show_create_table(&t)),
            other => Err(SqlError::unsupported(format!("SHOW CREATE {other}"))),
        },
        Statement::ShowCollation { filter } => {
            ShowFilter::from_ast(filter.as_ref()).and_then(|f| server::show_collations(snap, f))
        }
        Statement::ShowCharset(ShowCharset {
            is_shorthand: _,
            filter,
        }) => ShowFilter::from_ast(filter.as_ref()).and_then(|f| server::show_charsets(snap, f)),
        Statement::ShowVariable { variable } => {
            let ext = extension::from_words(variable)?;
            ext.and_then(|e| run_extension(snap, current_db, &e))
        }
        _ => return None,
    })
}

fn show_databases(
    snap: &CatalogSnapshot,
    terse: bool,
    history: bool,
    options: &ShowStatementOptions,
) -> SqlResult<ShowOutput> {
    refuse(&[
        (terse, "SHOW TERSE DATABASES"),
        (history, "SHOW DATABASES HISTORY"),
    ])?;
    let (show_in, filter) = split_options(options, "SHOW DATABASES")?;
    if show_in.is_some() {
        return Err(SqlError::unsupported("SHOW DATABASES FROM / IN"));
    }
    listing::show_databases(snap, filter)
}

fn show_tables(
    snap: &CatalogSnapshot,
    current_db: Option<&str>,
    full: bool,
    options: &ShowStatementOptions,
) -> SqlResult<ShowOutput> {
    let (show_in, filter) = split_options(options, "SHOW TABLES")?;
    let db = match show_in {
        None => None,
        Some(i) => match show_in_parts(i, "SHOW TABLES")?.as_slice() {
            [db] => Some(db.clone()),
            _ => return Err(SqlError::Parse(i.to_string())),
        },
    };
    listing::show_tables(snap, db.as_deref(), current_db, full, filter)
}

fn show_columns(
    snap: &CatalogSnapshot,
    current_db: Option<&str>,
    full: bool,
    options: &ShowStatementOptions,
) -> SqlResult<ShowOutput> {
    let (show_in, filter) = split_options(options, "SHOW COLUMNS")?;
    let show_in = show_in.ok_or_else(|| SqlError::Parse("SHOW COLUMNS without FROM".into()))?;
    let parts = show_in_parts(show_in, "SHOW COLUMNS")?;
    let t = listing::resolve_table(snap, &parts, current_db)?;
    listing::show_columns(&t, full, filter)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn show_prefix_check_skips_comments() {
        assert!(starts_with_show("  show tables"));
        assert!(starts_with_show("/* a */ -- b\n# c\nSHOW INDEX FROM t"));
        assert!(!starts_with_show("SELECT 1"));
        assert!(!starts_with_show("/* unterminated SHOW"));
        assert!(!starts_with_show("sho"));
    }
}
