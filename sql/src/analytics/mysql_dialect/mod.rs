//! The MySQL dialect of the analytical executor — the one place MySQL semantics are mapped onto
//! DataFusion: a syntax rewrite of the parsed query ([`rewrite`]), MySQL-semantics functions
//! ([`functions`], [`date_functions`] over the calendar and date text of [`date_text`]), checked
//! integer arithmetic and the string collation applied to the typed logical plan ([`typed`]), the
//! planner options that match MySQL ([`configure`]) and MySQL's result column names
//! ([`output_names`]).
//!
//! Invariant: a MySQL construct DataFusion would read differently is rewritten or rejected with
//! an error naming it; it is never passed through to mean something else.

pub mod date_functions;
pub mod date_text;
pub mod functions;
pub mod rewrite;
pub mod typed;

use datafusion::execution::context::SessionConfig;
use datafusion::sql::sqlparser::ast::{Expr, Query, SelectItem, SetExpr};

/// Planner options that make DataFusion read SQL as MySQL does.
#[must_use]
pub fn configure(config: SessionConfig) -> SessionConfig {
    let mut config = config;
    let opts = config.options_mut();
    // `1.5` is an exact DECIMAL literal in MySQL, not a DOUBLE.
    opts.sql_parser.parse_float_as_decimal = true;
    // Unquoted identifiers are lower-cased (columns are case-insensitive); the rewrite quotes
    // table names so they keep their case.
    opts.sql_parser.enable_ident_normalization = true;
    // Strings are Utf8, as the table providers produce them.
    opts.sql_parser.map_string_types_to_utf8view = false;
    // NULL is the smallest value: first in ASC, last in DESC.
    opts.sql_parser.default_null_ordering = "nulls_min".to_string();
    opts.sql_parser.dialect = datafusion::config::Dialect::MySQL;
    config
}

/// Result column names as MySQL shows them: the alias, else the expression as written (a column
/// reference shows its last name part). `None` where a wildcard makes the mapping unknown; the
/// caller then keeps the planner's names.
#[must_use]
pub fn output_names(q: &Query) -> Option<Vec<String>> {
    let mut body = q.body.as_ref();
    loop {
        match body {
            SetExpr::Select(s) => {
                let mut names = Vec::with_capacity(s.projection.len());
                for item in &s.projection {
                    names.push(match item {
                        SelectItem::UnnamedExpr(Expr::Identifier(id)) => id.value.clone(),
                        SelectItem::UnnamedExpr(Expr::CompoundIdentifier(parts)) => {
                            parts.last().map(|p| p.value.clone()).unwrap_or_default()
                        }
                        SelectItem::UnnamedExpr(e) => e.to_string(),
                        SelectItem::ExprWithAlias { alias, .. } => alias.value.clone(),
                        SelectItem::Wildcard(_)
                        | SelectItem::QualifiedWildcard(..)
                        | SelectItem::ExprWithAliases { .. } => {
                            return None;
                        }
                    });
                }
                return Some(names);
            }
            SetExpr::SetOperation { left, .. } => body = left.as_ref(),
            SetExpr::Query(inner) => body = inner.body.as_ref(),
            _ => return None,
        }
    }
}
