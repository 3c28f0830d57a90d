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
use datafusion::sql::sqlparser::ast::{
    Expr, FunctionArguments, ObjectType, Query, Statement, Value, visit_expressions,
};
use datafusion::sql::sqlparser::dialect::MySqlDialect;
use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::parser::Parser;
use datafusion::sql::sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer, Whitespace};
use std::ops::ControlFlow;

/// Nesting depth the parser accepts before failing with a syntax error.
pub const RECURSION_LIMIT: usize = 128;

/// True for a function call without arguments: `f()`, or `CURRENT_TIMESTAMP` with none.
pub(crate) fn no_args(args: &FunctionArguments) -> bool {
    match args {
        FunctionArguments::None => true,
        FunctionArguments::List(list) => list.args.is_empty(),
        FunctionArguments::Subquery(_) => false,
    }
}

/// Parses one or more `;`-separated statements. MySQL's older spelling of a shared locking
/// read, `LOCK IN SHARE MODE`, which the parser lacks, is read as `FOR SHARE` (only when the
/// text fails to parse as written, so other statements pay nothing for it).
pub fn parse(sql: &str) -> SqlResult<Vec<Statement>> {
    let dialect = MySqlDialect {};
    let stmts = Parser::new(&dialect)
        .with_recursion_limit(RECURSION_LIMIT)
        .try_with_sql(sql)
        .and_then(|mut p| p.parse_statements())
        .or_else(|e| {
            lock_in_share_mode_as_for_share(&dialect, sql)
                .and_then(|tokens| {
                    Parser::new(&dialect)
                        .with_recursion_limit(RECURSION_LIMIT)
                        .with_tokens_with_locations(tokens)
                        .parse_statements()
                        .ok()
                })
                .ok_or(e)
        })
        .map_err(|e| syntax_error(sql, &e.to_string()))?;
    if stmts.is_empty() {
        return Err(SqlError::EmptyQuery);
    }
    Ok(stmts)
}

/// The tokens of `sql` with each `LOCK IN SHARE MODE` (keywords outside quotes and comments)
/// replaced by `FOR SHARE`; `None` if it has none (or does not tokenize).
fn lock_in_share_mode_as_for_share(
    dialect: &MySqlDialect,
    sql: &str,
) -> Option<Vec<TokenWithSpan>> {
    const PHRASE: [Keyword; 4] = [Keyword::LOCK, Keyword::IN, Keyword::SHARE, Keyword::MODE];
    let tokens = Tokenizer::new(dialect, sql).tokenize_with_location().ok()?;
    let keyword = |t: &TokenWithSpan| match &t.token {
        Token::Word(w) if w.quote_style.is_none() => Some(w.keyword),
        _ => None,
    };
    let mut out = Vec::with_capacity(tokens.len());
    let mut replaced = false;
    let mut i = 0;
    while let Some(t) = tokens.get(i) {
        // The phrase's words, skipping whitespace between them: (index after it, span).
        let mut at = i;
        let mut matched = 0;
        while matched < PHRASE.len() {
            match tokens.get(at) {
                Some(t) if matches!(t.token, Token::Whitespace(_)) && matched > 0 => at += 1,
                Some(t) if keyword(t) == PHRASE.get(matched).copied() => {
                    matched += 1;
                    at += 1;
                }
                _ => break,
            }
        }
        if matched == PHRASE.len() {
            out.push(TokenWithSpan::new(Token::make_keyword("FOR"), t.span));
            out.push(TokenWithSpan::new(
                Token::Whitespace(Whitespace::Space),
                t.span,
            ));
            out.push(TokenWithSpan::new(Token::make_keyword("SHARE"), t.span));
            replaced = true;
            i = at;
        } else {
            out.push(t.clone());
            i += 1;
        }
    }
    replaced.then_some(out)
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
    /// A query (or `EXPLAIN` of one) for the analytical executor (DataFusion): a shape the fast
    /// path does not run, a query naming a view, or any table-reading SELECT when the session
    /// forces DataFusion. Planned again by DataFusion on every execution.
    Analytic(Box<Statement>),
}

impl Plan {
    /// True if, with autocommit off and no transaction open, this statement opens one that
    /// stays open (BEGIN opens its own; DDL and COMMIT / ROLLBACK open none).
    #[must_use]
    pub fn opens_transaction(&self) -> bool {
        match self {
            Self::Select(_)
            | Self::Insert(_)
            | Self::Modify(_)
            | Self::Explain(_)
            | Self::Analytic(_) => true,
            Self::Begin | Self::Commit | Self::Rollback | Self::Ddl(_) => false,
        }
    }

    /// Number of `?` parameters.
    #[must_use]
    pub fn param_count(&self) -> usize {
        match self {
            Self::Select(s) => s.param_count,
            Self::Insert(i) => i.param_count,
            Self::Modify(m) => m.param_count,
            Self::Explain(p) => p.param_count(),
            Self::Analytic(stmt) => placeholder_count(stmt),
            Self::Begin | Self::Commit | Self::Rollback | Self::Ddl(_) => 0,
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
/// lacks …): it goes to the analytical executor, which plans it over the catalog snapshot of
/// its execution and names what it cannot run itself (1235) when it cannot.
#[must_use]
pub fn unsupported_shape(query: &Query) -> Plan {
    Plan::Analytic(Box::new(Statement::Query(Box::new(query.clone()))))
}

/// Which executor runs table-reading SELECTs (the session variable `orcinus_execution_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExecutionMode {
    /// The fast path where it can, DataFusion for the rest.
    #[default]
    Auto,
    /// DataFusion for every SELECT that reads a table, except locking reads (`FOR UPDATE`,
    /// `FOR SHARE`), which need the fast path's row locks. Statements without a table
    /// (`SELECT 1`) and DML stay on the fast path.
    DataFusion,
}

/// Classifies and binds a statement in [`ExecutionMode::Auto`].
pub fn plan(stmt: &Statement, snap: &CatalogSnapshot, current_db: Option<&str>) -> SqlResult<Plan> {
    plan_in_mode(stmt, snap, current_db, ExecutionMode::Auto)
}

/// Classifies and binds a statement; `mode` picks the executor of table-reading SELECTs.
pub fn plan_in_mode(
    stmt: &Statement,
    snap: &CatalogSnapshot,
    current_db: Option<&str>,
    mode: ExecutionMode,
) -> SqlResult<Plan> {
    Ok(match stmt {
        Statement::Query(q) => match select::bind_query(q, snap, current_db) {
            Ok(select)
                if mode == ExecutionMode::DataFusion
                    && select.table.is_some()
                    && q.locks.is_empty() =>
            {
                unsupported_shape(q)
            }
            Ok(select) => Plan::Select(select),
            Err(SqlError::NotSupported(_)) => unsupported_shape(q),
            // The fast path knows no views: a query naming one is the analytical executor's.
            Err(SqlError::NoSuchTable { db, table }) if snap.view(&db, &table).is_some() => {
                unsupported_shape(q)
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
            // MySQL's START TRANSACTION characteristics (READ ONLY …) are recognized by the
            // session layer; what reaches here with modes (ISOLATION LEVEL, two access modes,
            // BEGIN READ ONLY) is not MySQL syntax.
            if !modes.is_empty() {
                let near: Vec<String> = modes.iter().map(ToString::to_string).collect();
                return Err(SqlError::Syntax {
                    near: near.join(", "),
                    line: 1,
                });
            }
            if modifier.is_some()
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
            let inner = plan_in_mode(statement, snap, current_db, mode)?;
            match inner {
                Plan::Select(_) | Plan::Modify(_) => Plan::Explain(Box::new(inner)),
                Plan::Analytic(_) => Plan::Analytic(Box::new(stmt.clone())),
                _ => return Err(SqlError::unsupported("EXPLAIN of this statement")),
            }
        }
        Statement::CreateTable(_)
        | Statement::CreateIndex(_)
        | Statement::CreateDatabase { .. }
        | Statement::CreateSchema { .. }
        | Statement::Truncate(_)
        | Statement::CreateView(_)
        | Statement::Use(_) => Plan::Ddl(Box::new(stmt.clone())),
        Statement::Drop {
            object_type:
                ObjectType::Table
                | ObjectType::Database
                | ObjectType::Schema
                | ObjectType::Index
                | ObjectType::View,
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

/// Number of `?` placeholders in a statement (the analytical executor binds them in order).
fn placeholder_count(stmt: &Statement) -> usize {
    let mut n = 0usize;
    let _ = visit_expressions(stmt, |e| {
        if let Expr::Value(v) = e
            && matches!(v.value, Value::Placeholder(_))
        {
            n += 1;
        }
        ControlFlow::<()>::Continue(())
    });
    n
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
