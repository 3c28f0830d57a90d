//! Parsing (MySqlDialect with a recursion limit) and statement classification into a [`Plan`]:
//! the cacheable bound form of a statement. DDL and USE stay as their AST (they are executed
//! under the catalog lock and never cached as bound plans).
//!
//! Invariant: every statement kind we do not run is rejected here with 1235 naming it.

use crate::catalog::CatalogSnapshot;
use crate::dml::{self, InsertPlan, ModifyPlan};
use crate::error::{SqlError, SqlResult};
use crate::result::OutputColumn;
use crate::select::{self, SelectPlan};
use crate::types::SqlType;
use datafusion::sql::sqlparser::ast::{ObjectType, Query, Statement};
use datafusion::sql::sqlparser::dialect::MySqlDialect;
use datafusion::sql::sqlparser::parser::Parser;

/// Nesting depth the parser accepts before failing with a syntax error.
pub const RECURSION_LIMIT: usize = 128;

/// Parses one or more `;`-separated statements.
pub fn parse(sql: &str) -> SqlResult<Vec<Statement>> {
    let dialect = MySqlDialect {};
    let stmts = Parser::new(&dialect)
        .with_recursion_limit(RECURSION_LIMIT)
        .try_with_sql(sql)
        .and_then(|mut p| p.parse_statements())
        .map_err(|e| syntax_error(sql, &e.to_string()))?;
    if stmts.is_empty() {
        return Err(SqlError::EmptyQuery);
    }
    Ok(stmts)
}

/// MySQL's 1064 for a parser error: the statement text from the position the parser reports
/// (`… at Line: L, Column: C`), or from the start when it reports none.
fn syntax_error(sql: &str, parser_message: &str) -> SqlError {
    let position = parser_message
        .rsplit_once(" at Line: ")
        .and_then(|(_, at)| {
            let (line, column) = at.split_once(", Column: ")?;
            Some((
                line.trim().parse::<usize>().ok()?,
                column.trim().parse::<usize>().ok()?,
            ))
        });
    let (line, column) = position.unwrap_or((1, 1));
    let near: String = sql
        .lines()
        .skip(line.saturating_sub(1))
        .collect::<Vec<_>>()
        .join("\n")
        .chars()
        .skip(column.saturating_sub(1))
        .take(80)
        .collect();
    SqlError::Syntax {
        near,
        line: line as u64,
    }
}

/// A statement ready to run.
#[derive(Debug, Clone)]
pub enum Plan {
    Select(SelectPlan),
    Insert(InsertPlan),
    Modify(ModifyPlan),
    /// BEGIN / START TRANSACTION.
    Begin,
    Commit,
    Rollback,
    /// EXPLAIN of a SELECT / UPDATE / DELETE.
    Explain(Box<Plan>),
    /// DDL or USE, executed from the AST.
    Ddl(Box<Statement>),
    /// A query the fast path cannot run, handed to DataFusion (`crate::analytics`).
    Analytical(Box<Statement>),
}

impl Plan {
    /// Number of `?` parameters.
    #[must_use]
    pub fn param_count(&self) -> usize {
        match self {
            Self::Select(s) => s.param_count,
            Self::Insert(i) => i.param_count,
            Self::Modify(m) => m.param_count,
            Self::Explain(p) => p.param_count(),
            Self::Begin | Self::Commit | Self::Rollback | Self::Ddl(_) | Self::Analytical(_) => 0,
        }
    }

    /// Result columns (empty for statements without a result set).
    #[must_use]
    pub fn columns(&self) -> Vec<OutputColumn> {
        match self {
            Self::Select(s) => s.columns.clone(),
            Self::Explain(_) => explain_columns(),
            _ => Vec::new(),
        }
    }
}

/// Columns of EXPLAIN output.
#[must_use]
pub fn explain_columns() -> Vec<OutputColumn> {
    ["table", "access"]
        .iter()
        .map(|n| OutputColumn {
            name: (*n).into(),
            org_name: String::new(),
            table: String::new(),
            db: String::new(),
            sql_type: SqlType::Varchar { len: 255 },
            nullable: false,
        })
        .collect()
}

/// The one place a SELECT the fast path cannot run ends up (joins, subqueries, functions it
/// lacks …; `reason` names what it lacks): it becomes a [`Plan::Analytical`], which DataFusion
/// plans at execution time over the catalog snapshot of that moment. `reason` is dropped:
/// DataFusion reports its own errors for what it cannot run either.
pub fn unsupported_shape(
    query: &Query,
    snap: &CatalogSnapshot,
    current_db: Option<&str>,
    reason: String,
) -> SqlResult<Plan> {
    let _ = (snap, current_db, reason);
    Ok(Plan::Analytical(Box::new(Statement::Query(Box::new(
        query.clone(),
    )))))
}

/// Classifies and binds a statement.
pub fn plan(stmt: &Statement, snap: &CatalogSnapshot, current_db: Option<&str>) -> SqlResult<Plan> {
    Ok(match stmt {
        Statement::Query(q) => match select::bind_query(q, snap, current_db) {
            Ok(select) => Plan::Select(select),
            Err(SqlError::NotSupported(reason)) => {
                return unsupported_shape(q, snap, current_db, reason);
            }
            Err(e) => return Err(e),
        },
        Statement::Insert(i) => Plan::Insert(dml::bind_insert(i, snap, current_db)?),
        Statement::Update(u) => Plan::Modify(dml::bind_update(u, snap, current_db)?),
        Statement::Delete(d) => Plan::Modify(dml::bind_delete(d, snap, current_db)?),
        Statement::StartTransaction {
            modes,
            begin: _,
            transaction: _,
            modifier,
            statements,
            exception,
            has_end_keyword,
        } => {
            if !modes.is_empty()
                || modifier.is_some()
                || !statements.is_empty()
                || exception.is_some()
                || *has_end_keyword
            {
                return Err(SqlError::unsupported(format!("{stmt}")));
            }
            Plan::Begin
        }
        Statement::Commit {
            chain,
            end: _,
            modifier,
        } => {
            if *chain || modifier.is_some() {
                return Err(SqlError::unsupported(format!("{stmt}")));
            }
            Plan::Commit
        }
        Statement::Rollback { chain, savepoint } => {
            if *chain || savepoint.is_some() {
                return Err(SqlError::unsupported(format!("{stmt}")));
            }
            Plan::Rollback
        }
        Statement::Explain {
            describe_alias: _,
            analyze,
            verbose,
            query_plan,
            estimate,
            statement,
            format,
            options,
        } => {
            if *analyze
                || *verbose
                || *query_plan
                || *estimate
                || format.is_some()
                || options.is_some()
            {
                return Err(SqlError::unsupported(format!("{stmt}")));
            }
            let inner = plan(statement, snap, current_db)?;
            match inner {
                Plan::Select(_) | Plan::Modify(_) => Plan::Explain(Box::new(inner)),
                _ => return Err(SqlError::unsupported("EXPLAIN of this statement")),
            }
        }
        Statement::CreateTable(_)
        | Statement::CreateIndex(_)
        | Statement::CreateDatabase { .. }
        | Statement::CreateSchema { .. }
        | Statement::Truncate(_)
        | Statement::Use(_) => Plan::Ddl(Box::new(stmt.clone())),
        Statement::Drop {
            object_type:
                ObjectType::Table | ObjectType::Database | ObjectType::Schema | ObjectType::Index,
            ..
        } => Plan::Ddl(Box::new(stmt.clone())),
        other => {
            let text = other.to_string();
            let what: String = text
                .split_whitespace()
                .take(2)
                .collect::<Vec<_>>()
                .join(" ");
            return Err(SqlError::unsupported(what));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_errors_quote_the_text_where_parsing_failed() {
        let e = parse("SELEC 1").unwrap_err();
        assert_eq!(e.code(), 1064);
        assert!(e.to_string().ends_with("near 'SELEC 1' at line 1"), "{e}");
        let e = parse("SELECT 1\nFROM t WHERE ) x").unwrap_err();
        assert!(e.to_string().ends_with("near ') x' at line 2"), "{e}");
    }
}
