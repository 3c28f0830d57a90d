//! Single-table SELECT: binding a query into a [`SelectPlan`] (once per prepared statement) and
//! executing it (per execution: bind parameters, fold constants, choose the access path, scan,
//! filter, aggregate, DISTINCT, ORDER BY, LIMIT/OFFSET). Locking reads (`FOR UPDATE`,
//! `FOR SHARE`) run through [`execute_locking`]: a current read that locks each row it returns.
//!
//! Invariant: every clause of the parsed query is either executed or rejected with 1235 — the
//! destructuring below has no `..`, so a parser upgrade adding a clause fails to compile.

use crate::access::{self, Access};
use crate::aggregate::{AggState, Groups};
use crate::bind::{AggSpec, Binder, agg_type};
use crate::catalog::{CatalogSnapshot, Table};
use crate::ddl::resolve_name;
use crate::error::{SqlError, SqlResult};
use crate::expr::BExpr;
use crate::order::{self, SortKeys};
use crate::result::{OutputColumn, StatementResult};
use crate::rowio;
use crate::stmt_ctx::StmtCtx;
use crate::types::{Datum, SqlType};
use crate::value;
use datafusion::sql::sqlparser::ast::{
    Expr, GroupByExpr, LimitClause, LockClause, NonBlock, ObjectName, Offset, OrderBy, OrderByExpr,
    OrderByKind, OrderByOptions, Query, Select, SelectFlavor, SelectItem, SetExpr, TableFactor,
    TableWithJoins, Value, WildcardAdditionalOptions, visit_expressions_mut,
};
use std::borrow::Cow;
use std::ops::ControlFlow;
use std::sync::Arc;

/// A bound single-table SELECT.
#[derive(Debug, Clone)]
pub struct SelectPlan {
    pub table: Option<Arc<Table>>,
    pub filter: Option<BExpr>,
    pub items: Vec<BExpr>,
    pub columns: Vec<OutputColumn>,
    pub aggs: Vec<AggSpec>,
    pub aggregate: bool,
    pub group_by: Vec<BExpr>,
    pub having: Option<BExpr>,
    pub order_by: Vec<(BExpr, bool)>,
    pub distinct: bool,
    pub limit: Option<BExpr>,
    pub offset: Option<BExpr>,
    pub param_count: usize,
    /// The table columns the query reads anywhere (ascending): the only ones a scan decodes.
    pub read_columns: Vec<usize>,
    /// A locking read's clause (`FOR UPDATE`, `FOR SHARE`, `LOCK IN SHARE MODE`); `None` for
    /// a consistent (snapshot) read.
    pub lock: Option<LockedRows>,
}

/// What a locking read does about rows another transaction holds locked. Every locking read
/// takes the row's exclusive lock: the engine has no shared row locks, so `FOR SHARE` locks as
/// `FOR UPDATE` does (readers of the same rows under `FOR SHARE` wait for each other instead of
/// sharing — never a weaker guarantee than MySQL's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockedRows {
    /// Wait for the lock (up to the lock-wait timeout; 1205 / 1213 as for writes).
    Wait,
    /// `NOWAIT`: fail with 3572 at the first row another transaction holds.
    NoWait,
    /// `SKIP LOCKED`: leave out the rows another transaction holds.
    SkipLocked,
}

/// The table columns `exprs` and the aggregate arguments read (ascending, distinct).
fn read_columns<'e>(exprs: impl Iterator<Item = &'e BExpr>, aggs: &'e [AggSpec]) -> Vec<usize> {
    let mut cols = Vec::new();
    for e in exprs.chain(aggs.iter().filter_map(|a| a.arg.as_ref())) {
        e.columns(&mut cols);
    }
    cols.sort_unstable();
    cols.dedup();
    cols
}

/// True for `FROM DUAL`: MySQL's dummy table name (a reserved word, so only the unquoted
/// name means it), which stands for no table.
fn is_dual(twj: &TableWithJoins) -> bool {
    let TableWithJoins { relation, joins } = twj;
    let TableFactor::Table {
        name,
        alias,
        args,
        with_hints,
        version,
        with_ordinality,
        partitions,
        json_path,
        sample,
        index_hints,
    } = relation
    else {
        return false;
    };
    let plain = joins.is_empty()
        && alias.is_none()
        && args.is_none()
        && with_hints.is_empty()
        && version.is_none()
        && !*with_ordinality
        && partitions.is_empty()
        && json_path.is_none()
        && sample.is_none()
        && index_hints.is_empty();
    plain
        && match name.0.as_slice() {
            [part] => part
                .as_ident()
                .is_some_and(|i| i.quote_style.is_none() && i.value.eq_ignore_ascii_case("DUAL")),
            _ => false,
        }
}

/// Resolves the single table of a FROM / UPDATE / DELETE clause.
pub fn resolve_table(
    twj: &TableWithJoins,
    snap: &CatalogSnapshot,
    current_db: Option<&str>,
) -> SqlResult<(Arc<Table>, Option<String>)> {
    let TableWithJoins { relation, joins } = twj;
    if !joins.is_empty() {
        return Err(SqlError::unsupported("JOIN"));
    }
    let TableFactor::Table {
        name,
        alias,
        args,
        with_hints,
        version,
        with_ordinality,
        partitions,
        json_path,
        sample,
        index_hints,
    } = relation
    else {
        return Err(SqlError::unsupported(format!("FROM {relation}")));
    };
    if args.is_some()
        || !with_hints.is_empty()
        || version.is_some()
        || *with_ordinality
        || !partitions.is_empty()
        || json_path.is_some()
        || sample.is_some()
    {
        return Err(SqlError::unsupported(format!("table reference {relation}")));
    }
    if !index_hints.is_empty() {
        return Err(SqlError::unsupported("index hints"));
    }
    let alias = match alias {
        Some(a) if !a.columns.is_empty() => {
            return Err(SqlError::unsupported("column aliases on a table"));
        }
        Some(a) => Some(a.name.value.clone()),
        None => None,
    };
    let (db, t) = resolve_name(name, current_db)?;
    Ok((snap.table(&db, &t)?, alias))
}

fn const_u64(e: &Expr, b: &mut Binder<'_>) -> SqlResult<BExpr> {
    let bound = b.bind(e)?;
    match &bound {
        BExpr::Const(_) | BExpr::Param(_) => Ok(bound),
        _ => Err(SqlError::Parse(e.to_string())),
    }
}

/// Binds a parsed query.
pub fn bind_query(
    q: &Query,
    snap: &CatalogSnapshot,
    current_db: Option<&str>,
) -> SqlResult<SelectPlan> {
    let Query {
        with,
        body,
        order_by,
        limit_clause,
        fetch,
        locks,
        for_clause,
        settings,
        format_clause,
        pipe_operators,
    } = q;
    if with.is_some() {
        return Err(SqlError::unsupported("WITH (common table expressions)"));
    }
    if fetch.is_some()
        || for_clause.is_some()
        || settings.is_some()
        || format_clause.is_some()
        || !pipe_operators.is_empty()
    {
        return Err(SqlError::unsupported(format!("this form of query: {q}")));
    }
    let lock = match locks.as_slice() {
        [] => None,
        [
            LockClause {
                lock_type: _,
                of,
                nonblock,
            },
        ] => Some((
            of.clone(),
            match nonblock {
                None => LockedRows::Wait,
                Some(NonBlock::Nowait) => LockedRows::NoWait,
                Some(NonBlock::SkipLocked) => LockedRows::SkipLocked,
            },
        )),
        _ => {
            return Err(SqlError::unsupported(
                "more than one locking clause (FOR UPDATE / FOR SHARE) in a SELECT",
            ));
        }
    };
    let select = match body.as_ref() {
        SetExpr::Select(s) => s,
        SetExpr::SetOperation { op, .. } => return Err(SqlError::unsupported(op.to_string())),
        SetExpr::Query(_) => return Err(SqlError::unsupported("parenthesized subqueries")),
        other => return Err(SqlError::unsupported(format!("query body {other}"))),
    };
    let Select {
        select_token: _,
        optimizer_hints,
        distinct,
        select_modifiers,
        top,
        top_before_distinct: _,
        projection,
        exclude,
        into,
        from,
        lateral_views,
        prewhere,
        selection,
        connect_by,
        group_by,
        cluster_by,
        distribute_by,
        sort_by,
        having,
        named_window,
        qualify,
        window_before_qualify: _,
        value_table_mode,
        flavor,
    } = select.as_ref();
    if !optimizer_hints.is_empty()
        || select_modifiers.is_some()
        || top.is_some()
        || exclude.is_some()
        || into.is_some()
        || !lateral_views.is_empty()
        || prewhere.is_some()
        || !connect_by.is_empty()
        || !cluster_by.is_empty()
        || !distribute_by.is_empty()
        || !sort_by.is_empty()
        || !named_window.is_empty()
        || qualify.is_some()
        || value_table_mode.is_some()
        || *flavor != SelectFlavor::Standard
    {
        return Err(SqlError::unsupported(format!(
            "this form of SELECT: {select}"
        )));
    }
    let distinct = match distinct {
        None | Some(datafusion::sql::sqlparser::ast::Distinct::All) => false,
        Some(datafusion::sql::sqlparser::ast::Distinct::Distinct) => true,
        Some(other) => return Err(SqlError::unsupported(other.to_string())),
    };
    let (table, alias) = match from.as_slice() {
        [] => (None, None),
        [one] if is_dual(one) => (None, None),
        [one] => {
            let (t, a) = resolve_table(one, snap, current_db)?;
            (Some(t), a)
        }
        _ => return Err(SqlError::unsupported("JOIN")),
    };
    let def = table.as_ref().map(|t| &t.def);
    let mut b = Binder::new(def, alias.as_deref());
    let qualifier = alias
        .clone()
        .or_else(|| def.map(|d| d.name.clone()))
        .unwrap_or_default();
    // `FOR UPDATE OF t` must name the query's table (by its alias, if it has one): 3568.
    let lock = match lock {
        Some((Some(of), _)) if !names_table(&of, &qualifier) || def.is_none() => {
            return Err(SqlError::UnresolvedLockTable(of.to_string()));
        }
        other => other.map(|(_, wait)| wait),
    };

    // Projection (aggregates allowed).
    b.aggs = Some(Vec::new());
    let mut items = Vec::new();
    let mut columns = Vec::new();
    let mut aliases: Vec<String> = Vec::new();
    for item in projection {
        let (expr, name) = match item {
            SelectItem::UnnamedExpr(e) => (e, None),
            SelectItem::ExprWithAlias { expr, alias } => (expr, Some(alias.value.clone())),
            SelectItem::Wildcard(opts) | SelectItem::QualifiedWildcard(_, opts) => {
                let WildcardAdditionalOptions {
                    wildcard_token: _,
                    opt_ilike,
                    opt_exclude,
                    opt_except,
                    opt_replace,
                    opt_rename,
                    opt_alias,
                } = opts;
                if opt_ilike.is_some()
                    || opt_exclude.is_some()
                    || opt_except.is_some()
                    || opt_replace.is_some()
                    || opt_rename.is_some()
                    || opt_alias.is_some()
                {
                    return Err(SqlError::unsupported(format!("wildcard options in {item}")));
                }
                if let SelectItem::QualifiedWildcard(kind, _) = item {
                    let q = kind.to_string();
                    let q = q.trim_end_matches(".*").to_string();
                    if !b.qualifiers.contains(&q) {
                        return Err(SqlError::UnknownTable(q));
                    }
                }
                let d = def.ok_or(SqlError::NoTablesUsed)?;
                for (i, c) in d.columns.iter().enumerate() {
                    items.push(BExpr::Column(i));
                    aliases.push(c.name.clone());
                    columns.push(OutputColumn {
                        name: c.name.clone(),
                        org_name: c.name.clone(),
                        table: qualifier.clone(),
                        db: d.db.clone(),
                        sql_type: c.ty,
                        nullable: c.nullable,
                    });
                }
                continue;
            }
            SelectItem::ExprWithAliases { .. } => {
                return Err(SqlError::unsupported(format!("select item {item}")));
            }
        };
        let bound = b.bind(expr)?;
        let shown = name.clone().unwrap_or_else(|| expr.to_string());
        aliases.push(shown.clone());
        items.push(bound);
        columns.push(OutputColumn {
            name: shown,
            org_name: String::new(),
            table: String::new(),
            db: String::new(),
            sql_type: SqlType::Text,
            nullable: true,
        });
    }
    let projection_aggs = b.aggs.take().unwrap_or_default();

    // WHERE (no aggregates).
    b.context = "where clause";
    let filter = selection.as_ref().map(|e| b.bind(e)).transpose()?;

    // GROUP BY (no aggregates).
    b.context = "group statement";
    let group_by = match group_by {
        GroupByExpr::Expressions(exprs, modifiers) => {
            if !modifiers.is_empty() {
                return Err(SqlError::unsupported("GROUP BY modifiers (WITH ROLLUP)"));
            }
            exprs
                .iter()
                .map(|e| bind_ref(e, &mut b, &items, &aliases))
                .collect::<SqlResult<Vec<_>>>()?
        }
        GroupByExpr::All(_) => return Err(SqlError::unsupported("GROUP BY ALL")),
    };

    // HAVING and ORDER BY (aggregates allowed).
    b.aggs = Some(projection_aggs);
    b.context = "having clause";
    let having = having
        .as_ref()
        .map(|e| bind_ref(&expand_aliases(e, projection), &mut b, &items, &aliases))
        .transpose()?;
    b.context = "order clause";
    let mut order = Vec::new();
    if let Some(OrderBy { kind, interpolate }) = order_by {
        if interpolate.is_some() {
            return Err(SqlError::unsupported("INTERPOLATE"));
        }
        let OrderByKind::Expressions(list) = kind else {
            return Err(SqlError::unsupported("ORDER BY ALL"));
        };
        for OrderByExpr {
            expr,
            options: OrderByOptions { asc, nulls_first },
            with_fill,
        } in list
        {
            if nulls_first.is_some() || with_fill.is_some() {
                return Err(SqlError::unsupported("NULLS FIRST/LAST"));
            }
            order.push((
                bind_ref(expr, &mut b, &items, &aliases)?,
                *asc == Some(false),
            ));
        }
    }
    let aggs = b.aggs.take().unwrap_or_default();

    b.context = "limit clause";
    let (limit, offset) = match limit_clause {
        None => (None, None),
        Some(LimitClause::LimitOffset {
            limit,
            offset,
            limit_by,
        }) => {
            if !limit_by.is_empty() {
                return Err(SqlError::unsupported("LIMIT BY"));
            }
            let off = match offset {
                Some(Offset { value, rows: _ }) => Some(const_u64(value, &mut b)?),
                None => None,
            };
            (
                limit.as_ref().map(|l| const_u64(l, &mut b)).transpose()?,
                off,
            )
        }
        Some(LimitClause::OffsetCommaLimit { offset, limit }) => {
            let off = const_u64(offset, &mut b)?;
            (Some(const_u64(limit, &mut b)?), Some(off))
        }
    };

    let param_count = b.params;
    let aggregate = !aggs.is_empty() || !group_by.is_empty();
    if aggregate {
        check_full_group_by(def, &items, &group_by)?;
    }
    let types = table.as_ref().map(|t| t.types.clone()).unwrap_or_default();
    let agg_types: Vec<SqlType> = aggs
        .iter()
        .map(|a| agg_type(a.func, a.arg.as_ref().map(|x| x.result_type(&types, &[]))))
        .collect();
    for (col, item) in columns.iter_mut().zip(&items) {
        if col.org_name.is_empty() {
            col.sql_type = item.result_type(&types, &agg_types);
            if let (BExpr::Column(i), Some(d)) = (item, def)
                && let Some(c) = d.columns.get(*i)
            {
                col.org_name = c.name.clone();
                col.table = qualifier.clone();
                col.db = d.db.clone();
                col.nullable = c.nullable;
            }
        }
    }
    let read_columns = read_columns(
        filter
            .iter()
            .chain(&items)
            .chain(&group_by)
            .chain(&having)
            .chain(order.iter().map(|(e, _)| e)),
        &aggs,
    );
    Ok(SelectPlan {
        read_columns,
        table,
        filter,
        items,
        columns,
        aggs,
        aggregate,
        group_by,
        having,
        order_by: order,
        distinct,
        limit,
        offset,
        param_count,
        lock,
    })
}

/// True if the object name `of` of a locking clause is `qualifier` (MySQL compares table
/// names and aliases case-sensitively, as on Linux).
fn names_table(of: &ObjectName, qualifier: &str) -> bool {
    match of.0.as_slice() {
        [part] => part.as_ident().is_some_and(|i| i.value == qualifier),
        _ => false,
    }
}

/// ONLY_FULL_GROUP_BY (MySQL 8.0's default): a select item of an aggregated query may read a
/// column outside aggregates only if it is grouped on, or the whole primary key is grouped on.
fn check_full_group_by(
    def: Option<&crate::catalog::TableDef>,
    items: &[BExpr],
    group_by: &[BExpr],
) -> SqlResult<()> {
    let grouped: Vec<usize> = group_by
        .iter()
        .filter_map(|g| {
            if let BExpr::Column(c) = g {
                Some(*c)
            } else {
                None
            }
        })
        .collect();
    if let Some(d) = def
        && !d.primary_key.is_empty()
        && d.primary_key.iter().all(|c| grouped.contains(c))
    {
        return Ok(());
    }
    for (n, item) in items.iter().enumerate() {
        if group_by.contains(item) {
            continue;
        }
        let mut cols = Vec::new();
        item.columns(&mut cols);
        if let Some(c) = cols.into_iter().find(|c| !grouped.contains(c)) {
            let name = def
                .and_then(|d| {
                    d.columns
                        .get(c)
                        .map(|col| format!("{}.{}.{}", d.db, d.name, col.name))
                })
                .unwrap_or_default();
            return Err(if group_by.is_empty() {
                SqlError::MixedAggregate(n + 1, name)
            } else {
                SqlError::NotInGroupBy(n + 1, name)
            });
        }
    }
    Ok(())
}

/// Binds an ORDER BY / GROUP BY / HAVING expression: a select-list alias or position refers to
/// that item; anything else binds normally. A name that is both an alias and a column means the
/// alias in ORDER BY and HAVING, the column in GROUP BY (MySQL's resolution order, which
/// Connector/J's metadata queries rely on: `… AS TABLE_TYPE … HAVING TABLE_TYPE IN (…)`).
fn bind_ref(e: &Expr, b: &mut Binder<'_>, items: &[BExpr], aliases: &[String]) -> SqlResult<BExpr> {
    if let Expr::Value(v) = e
        && let Value::Number(n, _) = &v.value
    {
        let pos: usize = n.parse().map_err(|_| SqlError::Parse(n.clone()))?;
        return pos
            .checked_sub(1)
            .and_then(|i| items.get(i))
            .cloned()
            .ok_or_else(|| SqlError::UnknownColumn {
                column: n.clone(),
                context: b.context.into(),
            });
    }
    if let Expr::Identifier(id) = e {
        let by_column = b.table.and_then(|t| t.column_index(&id.value));
        if (by_column.is_none() || b.context != "group statement")
            && let Some(i) = aliases
                .iter()
                .position(|a| a.eq_ignore_ascii_case(&id.value))
        {
            return items
                .get(i)
                .cloned()
                .ok_or_else(|| SqlError::Internal("alias".into()));
        }
    }
    b.bind(e)
}

/// `e` with every identifier that names a select-list alias replaced by the aliased expression:
/// MySQL lets HAVING use aliases anywhere in its condition (`HAVING TABLE_TYPE IN (…)` where
/// `TABLE_TYPE` is `CASE … END AS TABLE_TYPE`), preferring the alias over a column of that name.
/// Aliased expressions holding `?` are not copied (a copy would count its parameters twice); a
/// bare reference to such an alias still resolves through [`bind_ref`].
fn expand_aliases(e: &Expr, projection: &[SelectItem]) -> Expr {
    let mut out = e.clone();
    let _ = visit_expressions_mut(&mut out, |x| {
        if let Expr::Identifier(id) = x {
            let aliased = projection.iter().find_map(|item| match item {
                SelectItem::ExprWithAlias { expr, alias }
                    if alias.value.eq_ignore_ascii_case(&id.value) && !has_placeholder(expr) =>
                {
                    Some(expr.clone())
                }
                _ => None,
            });
            if let Some(expr) = aliased {
                *x = expr;
            }
        }
        ControlFlow::<()>::Continue(())
    });
    out
}

/// True if `e` contains a `?` parameter.
fn has_placeholder(e: &Expr) -> bool {
    let mut copy = e.clone();
    visit_expressions_mut(&mut copy, |x| match x {
        Expr::Value(v) if matches!(v.value, Value::Placeholder(_)) => ControlFlow::Break(()),
        _ => ControlFlow::Continue(()),
    })
    .is_break()
}

fn prepare_expr(e: &BExpr, params: &[Datum], last_id: u64) -> SqlResult<BExpr> {
    let mut e = e.clone();
    e.bind_params(params, last_id)?;
    e.fold()?;
    Ok(e)
}

fn limit_value(e: &Option<BExpr>, params: &[Datum], last_id: u64) -> SqlResult<Option<u64>> {
    let Some(e) = e else { return Ok(None) };
    match prepare_expr(e, params, last_id)? {
        BExpr::Const(Datum::Int(v)) if v >= 0 => Ok(Some(v.unsigned_abs())),
        BExpr::Const(Datum::UInt(v)) => Ok(Some(v)),
        BExpr::Const(Datum::Bytes(b)) => String::from_utf8_lossy(&b)
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| SqlError::WrongArguments("LIMIT".into())),
        _ => Err(SqlError::WrongArguments("LIMIT".into())),
    }
}

/// True if binding parameters and folding constants leaves `e` as it is (a column, an aggregate
/// slot or a constant), so an execution can use the plan's copy.
fn needs_no_preparation(e: &BExpr) -> bool {
    matches!(e, BExpr::Column(_) | BExpr::Agg(_) | BExpr::Const(_))
}

/// The plan's list with each expression prepared for one execution (parameters bound, constants
/// folded) — borrowed unchanged when no expression in it needs that (the usual case for select
/// lists and ORDER BY keys), which saves a copy per execution.
fn prepared_list<'p, T: Clone>(
    list: &'p [T],
    expr_of: impl Fn(&T) -> Option<&BExpr>,
    prepare: impl Fn(&T) -> SqlResult<T>,
) -> SqlResult<Cow<'p, [T]>> {
    if list
        .iter()
        .all(|t| expr_of(t).is_none_or(needs_no_preparation))
    {
        return Ok(Cow::Borrowed(list));
    }
    list.iter()
        .map(prepare)
        .collect::<SqlResult<Vec<T>>>()
        .map(Cow::Owned)
}

/// A plan with parameters bound and constants folded, plus its access path.
pub struct BoundSelect {
    pub filter: Option<BExpr>,
    pub access: Access,
}

/// Binds parameters into the filter and chooses the access path (used by EXPLAIN too).
pub fn bind_filter(
    table: Option<&Table>,
    filter: &Option<BExpr>,
    params: &[Datum],
    last_id: u64,
) -> SqlResult<BoundSelect> {
    let filter = filter
        .as_ref()
        .map(|f| prepare_expr(f, params, last_id))
        .transpose()?;
    let access = match table {
        Some(t) => access::choose(t, filter.as_ref()),
        None => Access::FullScan,
    };
    Ok(BoundSelect { filter, access })
}

/// Executes a bound SELECT.
pub fn execute(
    plan: &SelectPlan,
    ctx: &StmtCtx<'_>,
    params: &[Datum],
    last_id: u64,
) -> SqlResult<StatementResult> {
    execute_with_source(
        plan,
        params,
        last_id,
        AccessRows::Exact,
        &mut |table, access, visit| match table {
            Some(t) => {
                access::fetch_rows(ctx, t, access, Some(&plan.read_columns), &mut |_, row| {
                    visit(row)
                })
            }
            None => visit(&mut Vec::new()).map(|_| ()),
        },
    )
}

/// Executes a locking read (`FOR UPDATE` / `FOR SHARE`): InnoDB's current read. The rows the
/// access path finds in the snapshot that pass the filter (for primary-key points, the keys
/// themselves, present or not) are locked one by one in access-path order, each is read at its
/// latest committed version (or the transaction's own), and the filter is checked again on that
/// version; the rows that pass go through aggregation, DISTINCT, ORDER BY and LIMIT as in
/// [`execute`]. The locks stay held until the transaction ends (an autocommitted statement's
/// at its end). Like UPDATE and DELETE, a row inserted into a scanned range after the snapshot
/// is not seen (there are no gap locks). Without ORDER BY, aggregation, DISTINCT or HAVING, the
/// scan stops once LIMIT + OFFSET rows are locked.
pub async fn execute_locking(
    plan: &SelectPlan,
    ctx: &mut StmtCtx<'_>,
    params: &[Datum],
    last_id: u64,
    wait: LockedRows,
) -> SqlResult<StatementResult> {
    let Some(table) = plan.table.as_deref() else {
        return execute(plan, ctx, params, last_id);
    };
    let BoundSelect { filter, access } = bind_filter(Some(table), &plan.filter, params, last_id)?;
    let passes = |row: &[Datum]| -> SqlResult<bool> {
        Ok(match &filter {
            None => true,
            Some(f) => value::truth(&f.eval(row, &[])?) == Some(true),
        })
    };
    let mut keys = Vec::new();
    match &access {
        Access::PkPoints(points) => keys = access::point_keys(table, points)?,
        _ => access::fetch(ctx, table, &access, &mut |k, row| {
            if passes(&row)? {
                keys.push(k);
            }
            Ok(true)
        })?,
    }
    let wanted =
        if plan.aggregate || plan.distinct || plan.having.is_some() || !plan.order_by.is_empty() {
            None
        } else {
            limit_value(&plan.limit, params, last_id)?.map(|l| {
                l.saturating_add(
                    limit_value(&plan.offset, params, last_id)
                        .ok()
                        .flatten()
                        .unwrap_or(0),
                )
            })
        };
    let mut rows = Vec::new();
    for k in keys {
        if wanted.is_some_and(|n| rows.len() as u64 >= n) {
            break;
        }
        let latest = match wait {
            LockedRows::Wait => ctx.get_for_update(&k).await?,
            LockedRows::NoWait => ctx
                .try_get_for_update(&k)
                .await?
                .ok_or(SqlError::LockNowait)?,
            LockedRows::SkipLocked => match ctx.try_get_for_update(&k).await? {
                Some(latest) => latest,
                None => continue,
            },
        };
        let Some(bytes) = latest else { continue };
        let row = rowio::decode_row(table, &bytes)?;
        if passes(&row)? {
            rows.push(row);
        }
    }
    execute_over_rows(plan, rows, params, last_id)
}

/// Executes a bound SELECT over rows the caller already holds in table column order instead
/// of a storage scan (information_schema's virtual tables): same filter, aggregation, DISTINCT,
/// ORDER BY and LIMIT as [`execute`].
pub fn execute_over_rows(
    plan: &SelectPlan,
    rows: Vec<Vec<Datum>>,
    params: &[Datum],
    last_id: u64,
) -> SqlResult<StatementResult> {
    let mut rows = Some(rows);
    execute_with_source(
        plan,
        params,
        last_id,
        AccessRows::All,
        &mut |_, _, visit| {
            for mut row in rows.take().unwrap_or_default() {
                if !visit(&mut row)? {
                    break;
                }
            }
            Ok(())
        },
    )
}

/// For each select item: true if it is a bare column that no other item reads, so its value can
/// be moved out of the row (once the sort keys have been taken) instead of copied.
fn movable_items(items: &[BExpr]) -> Vec<bool> {
    let mut uses = Vec::new();
    for e in items {
        e.columns(&mut uses);
    }
    items
        .iter()
        .map(|e| matches!(e, BExpr::Column(c) if uses.iter().filter(|u| *u == c).count() == 1))
        .collect()
}

/// Calls the visitor for every row of the plan's table (or once with an empty row when the
/// query has no FROM); the visitor returns false to stop early.
/// The row is a buffer the source may reuse: the visitor only takes values out of it.
type RowSource<'s> = dyn FnMut(
        Option<&Table>,
        &Access,
        &mut dyn FnMut(&mut Vec<Datum>) -> SqlResult<bool>,
    ) -> SqlResult<()>
    + 's;

/// What a [`RowSource`] yields for an access path.
#[derive(Clone, Copy, PartialEq, Eq)]
enum AccessRows {
    /// The rows of the access path (a superset of the filter's rows).
    Exact,
    /// Every row, whatever the access path.
    All,
}

fn execute_with_source(
    plan: &SelectPlan,
    params: &[Datum],
    last_id: u64,
    rows: AccessRows,
    source: &mut RowSource<'_>,
) -> SqlResult<StatementResult> {
    let BoundSelect { filter, access } =
        bind_filter(plan.table.as_deref(), &plan.filter, params, last_id)?;
    // A filter that only restates the access path's key range is not evaluated per row.
    let filter = match (&filter, plan.table.as_deref()) {
        (Some(f), Some(t))
            if rows == AccessRows::Exact && access::filter_is_exact(t, f, &access) =>
        {
            None
        }
        _ => filter,
    };
    let p = |e: &BExpr| prepare_expr(e, params, last_id);
    let items = prepared_list(&plan.items, |e| Some(e), |e| p(e))?;
    let order = prepared_list(&plan.order_by, |(e, _)| Some(e), |(e, d)| Ok((p(e)?, *d)))?;
    let group_by = prepared_list(&plan.group_by, |e| Some(e), |e| p(e))?;
    let having = plan.having.as_ref().map(p).transpose()?;
    let aggs = prepared_list(
        &plan.aggs,
        |a| a.arg.as_ref(),
        |a| {
            Ok(AggSpec {
                func: a.func,
                arg: a.arg.as_ref().map(p).transpose()?,
                distinct: a.distinct,
            })
        },
    )?;
    let limit = limit_value(&plan.limit, params, last_id)?;
    let offset = limit_value(&plan.offset, params, last_id)?.unwrap_or(0);
    let early_stop = (!plan.aggregate && order.is_empty() && !plan.distinct)
        .then(|| limit.map(|l| l.saturating_add(offset)))
        .flatten();

    let sort = SortKeys::new(&items, &order);
    let movable = movable_items(&items);
    // (output row, sort keys that are not output columns)
    let mut out: Vec<(Vec<Datum>, Vec<Datum>)> = if plan.aggregate {
        Vec::new()
    } else {
        let limit = early_stop.map_or(usize::MAX, |n| usize::try_from(n).unwrap_or(usize::MAX));
        Vec::with_capacity(access.row_estimate().min(limit))
    };
    let mut groups = Groups::new(&aggs);
    let passes = |row: &[Datum]| -> SqlResult<bool> {
        Ok(match &filter {
            None => true,
            Some(f) => value::truth(&f.eval(row, &[])?) == Some(true),
        })
    };
    let mut visit = |row: &mut Vec<Datum>| -> SqlResult<bool> {
        if !passes(row)? {
            return Ok(true);
        }
        if plan.aggregate {
            groups.add(&group_by, &aggs, row)?;
            return Ok(true);
        }
        // HAVING without aggregation filters rows like WHERE, but may name select aliases.
        if let Some(h) = &having
            && value::truth(&h.eval(row, &[])?) != Some(true)
        {
            return Ok(true);
        }
        let keys = sort.extra_keys(&order, row, &[])?;
        // The row is not read after this, so bare column items move their value out of it.
        let vals = items
            .iter()
            .zip(&movable)
            .map(|(e, &mv)| match (e, mv) {
                (BExpr::Column(c), true) => row
                    .get_mut(*c)
                    .map(|v| std::mem::replace(v, Datum::Null))
                    .ok_or_else(|| SqlError::Internal(format!("column #{c} out of row"))),
                _ => e.eval(row, &[]),
            })
            .collect::<SqlResult<Vec<_>>>()?;
        out.push((vals, keys));
        Ok(early_stop.is_none_or(|n| (out.len() as u64) < n))
    };
    source(plan.table.as_deref(), &access, &mut visit)?;
    if plan.aggregate {
        let width = plan.table.as_ref().map_or(0, |t| t.types.len());
        for (row, states) in groups.finish(group_by.is_empty(), width) {
            let agg_vals: Vec<Datum> = states
                .into_iter()
                .map(AggState::result)
                .collect::<SqlResult<_>>()?;
            if let Some(h) = &having
                && value::truth(&h.eval(&row, &agg_vals)?) != Some(true)
            {
                continue;
            }
            let vals = items
                .iter()
                .map(|e| e.eval(&row, &agg_vals))
                .collect::<SqlResult<Vec<_>>>()?;
            let keys = sort.extra_keys(&order, &row, &agg_vals)?;
            out.push((vals, keys));
        }
    }
    match (plan.distinct, order.is_empty()) {
        (true, false) => out = order::distinct_sorted(out, &sort, &order),
        (true, true) => out = order::distinct_rows(out),
        (false, false) => order::sort_rows(&mut out, &sort, &order),
        (false, true) => {}
    }
    let rows: Vec<Vec<Datum>> = out
        .into_iter()
        .skip(usize::try_from(offset).unwrap_or(usize::MAX))
        .take(
            limit
                .and_then(|l| usize::try_from(l).ok())
                .unwrap_or(usize::MAX),
        )
        .map(|(v, _)| v)
        .collect();
    Ok(StatementResult::Rows {
        columns: plan.columns.clone(),
        rows,
    })
}
