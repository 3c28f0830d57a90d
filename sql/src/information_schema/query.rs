//! SELECT over one information_schema view: the query is bound by the ordinary SELECT binder
//! against the view's [`TableDef`](crate::catalog::TableDef) and run by the ordinary executor
//! over the view's rows (`select::execute_over_rows`), so filters (=, <>, IN, LIKE, AND/OR,
//! IS NULL, …), aggregates, ORDER BY and LIMIT behave exactly as over a stored table.
//!
//! Invariants: a query is routed here only when its FROM names an information_schema view
//! (qualified, or unqualified while information_schema is the current database); anything the
//! fast-path binder rejects (JOINs, subqueries, …) is rejected with its 1235 error. `DATABASE()`
//! / `SCHEMA()` are replaced by the session's current database before binding. Result columns
//! that are plain column references are named as MySQL 8.0 names them: the view's upper-case
//! column name unless the query gave an alias.

use super::rows::view_rows;
use super::views::{INFORMATION_SCHEMA, SystemView, is_information_schema};
use crate::bind::object_name_parts;
use crate::catalog::{CatalogSnapshot, Table};
use crate::error::{SqlError, SqlResult};
use crate::result::{OutputColumn, StatementResult};
use crate::select::{self, SelectPlan};
use crate::types::Datum;
use datafusion::sql::sqlparser::ast::{
    Expr, FunctionArguments, Query, SelectItem, SetExpr, TableFactor, Value, visit_expressions_mut,
};
use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

/// A reference to a view as the query spelled it.
struct ViewReference {
    db: String,
    table: String,
}

/// The information_schema table named by `relation`, if it names one.
fn view_reference(relation: &TableFactor, current_db: Option<&str>) -> Option<ViewReference> {
    let TableFactor::Table { name, .. } = relation else {
        return None;
    };
    let parts = object_name_parts(name).ok()?;
    match parts.as_slice() {
        [db, table] if is_information_schema(db) => Some(ViewReference {
            db: db.clone(),
            table: table.clone(),
        }),
        [table] => current_db
            .filter(|db| is_information_schema(db))
            .map(|db| ViewReference {
                db: db.to_string(),
                table: table.clone(),
            }),
        _ => None,
    }
}

/// The first information_schema table the query's FROM clause names.
fn find_view_reference(q: &Query, current_db: Option<&str>) -> Option<ViewReference> {
    let SetExpr::Select(select) = q.body.as_ref() else {
        return None;
    };
    select.from.iter().find_map(|twj| {
        view_reference(&twj.relation, current_db).or_else(|| {
            twj.joins
                .iter()
                .find_map(|j| view_reference(&j.relation, current_db))
        })
    })
}

/// True if the query reads an information_schema view (and so belongs to [`execute_query`]).
#[must_use]
pub fn reads_information_schema(q: &Query, current_db: Option<&str>) -> bool {
    find_view_reference(q, current_db).is_some()
}

/// Replaces `DATABASE()` and `SCHEMA()` by the current database (NULL without one).
fn substitute_current_database(q: &mut Query, current_db: Option<&str>) {
    let _ = visit_expressions_mut(q, |e| {
        if let Expr::Function(f) = e {
            let no_args = match &f.args {
                FunctionArguments::None => true,
                FunctionArguments::List(l) => l.args.is_empty(),
                FunctionArguments::Subquery(_) => false,
            };
            let name = f.name.to_string();
            if no_args
                && (name.eq_ignore_ascii_case("database") || name.eq_ignore_ascii_case("schema"))
            {
                let v =
                    current_db.map_or(Value::Null, |db| Value::SingleQuotedString(db.to_string()));
                *e = Expr::Value(v.into());
            }
        }
        ControlFlow::<()>::Continue(())
    });
}

/// Binds `q` against the view it reads. `None` if it reads no view.
fn bind(q: &Query, current_db: Option<&str>) -> Option<SqlResult<(SystemView, SelectPlan)>> {
    let reference = find_view_reference(q, current_db)?;
    Some(bind_view_query(q, current_db, &reference))
}

fn bind_view_query(
    q: &Query,
    current_db: Option<&str>,
    reference: &ViewReference,
) -> SqlResult<(SystemView, SelectPlan)> {
    let view = SystemView::lookup(&reference.table).ok_or_else(|| SqlError::NoSuchTable {
        db: INFORMATION_SCHEMA.to_string(),
        table: reference.table.clone(),
    })?;
    let def = view.table_def_as(&reference.db, &reference.table);
    let table = Arc::new(Table {
        types: def.types(),
        def,
        next_auto: Arc::new(AtomicU64::new(0)),
    });
    let mut tables = BTreeMap::new();
    tables.insert(reference.table.clone(), table);
    let mut dbs = BTreeMap::new();
    dbs.insert(reference.db.clone(), tables);
    let snapshot = CatalogSnapshot {
        version: 0,
        dbs,
        views: BTreeMap::new(),
    };
    let mut query = q.clone();
    substitute_current_database(&mut query, current_db);
    let mut plan = select::bind_query(&query, &snapshot, current_db)?;
    name_columns(&query, view, &mut plan.columns);
    Ok((view, plan))
}

/// Gives view columns MySQL's metadata: database information_schema, the view's name as table,
/// and the upper-case column name for unaliased column references.
fn name_columns(q: &Query, view: SystemView, columns: &mut [OutputColumn]) {
    let SetExpr::Select(select) = q.body.as_ref() else {
        return;
    };
    let mut out = 0usize;
    for item in &select.projection {
        match item {
            SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..) => {
                out += view.columns().len();
            }
            SelectItem::UnnamedExpr(Expr::Identifier(_) | Expr::CompoundIdentifier(_)) => {
                if let Some(col) = columns.get_mut(out)
                    && !col.org_name.is_empty()
                {
                    col.name = col.org_name.clone();
                }
                out += 1;
            }
            _ => out += 1,
        }
    }
    for col in columns.iter_mut().filter(|c| !c.org_name.is_empty()) {
        col.db = INFORMATION_SCHEMA.to_string();
        col.table = view.name().to_string();
    }
}

/// Runs `q` if it reads an information_schema view; `None` otherwise. `params` are the values of
/// `?` placeholders (empty for text queries).
pub fn execute_query(
    snap: &CatalogSnapshot,
    current_db: Option<&str>,
    q: &Query,
    params: &[Datum],
) -> Option<SqlResult<StatementResult>> {
    execute_query_with(snap, current_db, q, params, None)
}

/// [`execute_query`] with the rows of PROCESSLIST (the server's sessions, which only a session
/// can supply; without them a query over PROCESSLIST fails with 1235).
pub fn execute_query_with(
    snap: &CatalogSnapshot,
    current_db: Option<&str>,
    q: &Query,
    params: &[Datum],
    processlist: Option<Vec<Vec<Datum>>>,
) -> Option<SqlResult<StatementResult>> {
    let bound = bind(q, current_db)?;
    Some(bound.and_then(|(view, plan)| {
        if params.len() != plan.param_count {
            return Err(SqlError::WrongArguments("mysqld_stmt_execute".into()));
        }
        if plan.lock.is_some() {
            return Err(SqlError::unsupported(
                "SELECT … FOR UPDATE / FOR SHARE of an information_schema table",
            ));
        }
        let rows = match (view, processlist) {
            (SystemView::Processlist, Some(rows)) => rows,
            _ => view_rows(view, snap)?,
        };
        select::execute_over_rows(&plan, rows, params, 0)
    }))
}

/// Result columns and parameter count of `q` (for COM_STMT_PREPARE) if it reads an
/// information_schema view; `None` otherwise.
pub fn describe_query(
    q: &Query,
    current_db: Option<&str>,
) -> Option<SqlResult<(Vec<OutputColumn>, usize)>> {
    let bound = bind(q, current_db)?;
    Some(bound.map(|(_, plan)| (plan.columns, plan.param_count)))
}
