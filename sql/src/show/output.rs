//! The result of a SHOW statement under construction: its columns (MySQL's names, order and
//! types), its rows, and the `LIKE 'pattern'` / `WHERE expr` filters SHOW accepts.
//!
//! Invariants: `WHERE` binds against the SHOW's own column names (as MySQL evaluates it over the
//! result) with the ordinary binder and evaluator, so it accepts exactly the expressions a SELECT
//! filter accepts; `LIKE` matches the first column with the crate's LIKE (case-insensitive).

use crate::bind::Binder;
use crate::catalog::{ColumnDef, TableDef, TableOptions};
use crate::error::{SqlError, SqlResult};
use crate::result::{OutputColumn, StatementResult};
use crate::types::{Datum, SqlType};
use crate::value;
use datafusion::sql::sqlparser::ast::{Expr, ShowStatementFilter};

/// A SHOW filter in the forms MySQL accepts.
#[derive(Debug, Clone, Copy)]
pub enum ShowFilter<'a> {
    Like(&'a str),
    Where(&'a Expr),
}

impl<'a> ShowFilter<'a> {
    /// The MySQL forms of a parsed filter; ILIKE and a bare pattern are not MySQL syntax.
    pub fn from_ast(filter: Option<&'a ShowStatementFilter>) -> SqlResult<Option<Self>> {
        match filter {
            None => Ok(None),
            Some(ShowStatementFilter::Like(p)) => Ok(Some(Self::Like(p))),
            Some(ShowStatementFilter::Where(e)) => Ok(Some(Self::Where(e))),
            Some(other @ (ShowStatementFilter::ILike(_) | ShowStatementFilter::NoKeyword(_))) => {
                Err(SqlError::unsupported(format!("SHOW … {other}")))
            }
        }
    }
}

/// Columns and rows of a SHOW result.
#[derive(Debug, Clone)]
pub struct ShowOutput {
    pub columns: Vec<OutputColumn>,
    pub rows: Vec<Vec<Datum>>,
}

/// A result column of a SHOW statement.
#[must_use]
pub fn column(name: &str, sql_type: SqlType, nullable: bool) -> OutputColumn {
    OutputColumn {
        name: name.to_string(),
        org_name: String::new(),
        table: String::new(),
        db: String::new(),
        sql_type,
        nullable,
    }
}

/// A `VARCHAR(64)` column (MySQL's width for names).
#[must_use]
pub fn name_column(name: &str, nullable: bool) -> OutputColumn {
    column(name, SqlType::Varchar { len: 64 }, nullable)
}

impl ShowOutput {
    /// An empty result with these columns.
    #[must_use]
    pub fn new(columns: Vec<OutputColumn>) -> Self {
        Self {
            columns,
            rows: Vec::new(),
        }
    }

    /// Keeps the rows that pass `filter`. With `title_like`, a LIKE pattern is appended to the
    /// first column's name as MySQL does for SHOW DATABASES / SHOW TABLES (`Database (sb%)`).
    pub fn filter(mut self, filter: Option<ShowFilter<'_>>, title_like: bool) -> SqlResult<Self> {
        match filter {
            None => {}
            Some(ShowFilter::Like(pattern)) => {
                self.rows.retain(|row| {
                    row.first()
                        .and_then(value::to_text)
                        .is_some_and(|t| value::like(&t, pattern.as_bytes(), b'\\'))
                });
                if title_like && let Some(first) = self.columns.first_mut() {
                    first.name = format!("{} ({pattern})", first.name);
                }
            }
            Some(ShowFilter::Where(e)) => {
                let def = self.as_table_def();
                let mut binder = Binder::new(Some(&def), None);
                binder.context = "where clause";
                let mut bound = binder.bind(e)?;
                if binder.params > 0 {
                    return Err(SqlError::unsupported("parameters in SHOW … WHERE"));
                }
                bound.fold()?;
                let mut kept = Vec::with_capacity(self.rows.len());
                for row in self.rows {
                    if value::truth(&bound.eval(&row, &[])?) == Some(true) {
                        kept.push(row);
                    }
                }
                self.rows = kept;
            }
        }
        Ok(self)
    }

    /// The result as a table whose columns are the SHOW's columns (what WHERE binds against).
    fn as_table_def(&self) -> TableDef {
        TableDef {
            id: 0,
            db: String::new(),
            name: String::new(),
            columns: self
                .columns
                .iter()
                .map(|c| ColumnDef {
                    name: c.name.clone(),
                    ty: c.sql_type,
                    nullable: c.nullable,
                    default: None,
                    auto_increment: false,
                    default_now: false,
                })
                .collect(),
            primary_key: Vec::new(),
            indexes: Vec::new(),
            options: TableOptions::default(),
        }
    }

    /// The statement result.
    #[must_use]
    pub fn into_result(self) -> StatementResult {
        StatementResult::Rows {
            columns: self.columns,
            rows: self.rows,
        }
    }
}
