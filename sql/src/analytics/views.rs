//! Views: `CREATE [OR REPLACE] VIEW`, `DROP VIEW [IF EXISTS]`, and their expansion into queries.
//!
//! Invariants:
//! - A view is stored (catalog record `'v'`, see `sql/FORMAT.md`) as its SELECT text with every
//!   table name qualified by the database it resolved to at creation, as MySQL does, so it means
//!   the same thing whatever the current database of the query that uses it.
//! - CREATE VIEW plans the query first: a view over missing tables or columns is refused with
//!   the planner's error, and a column list must match the SELECT list (1353).
//! - A query that names a view gets the view's SELECT inlined as a derived table (MySQL's MERGE
//!   algorithm) before the dialect rewrite; a table of the same name wins, CTE names shadow both,
//!   and more than [`MAX_VIEW_EXPANSIONS`] expansions in one query are refused.

use super::AnalyticsEngine;
use crate::catalog::{Catalog, CatalogSnapshot, ViewDef};
use crate::ddl::resolve_name;
use crate::error::{SqlError, SqlResult};
use crate::result::StatementResult;
use datafusion::sql::sqlparser::ast::{
    CreateTableOptions, CreateView, CreateViewParams, Ident, ObjectName, ObjectNamePart, Query,
    Statement, TableAlias, TableAliasColumnDef, TableFactor, ViewColumnDef, VisitMut, VisitorMut,
};
use datafusion::sql::sqlparser::tokenizer::Span;
use std::collections::HashSet;
use std::ops::ControlFlow;
use std::sync::Arc;

/// How many view references one query may expand (a bound on nesting and fan-out).
pub const MAX_VIEW_EXPANSIONS: usize = 1024;

fn ident(s: &str) -> Ident {
    Ident {
        value: s.to_string(),
        quote_style: Some('`'),
        span: Span::empty(),
    }
}

/// Names defined by WITH clauses anywhere in `q` (they shadow tables and views).
fn cte_names(q: &mut Query) -> HashSet<String> {
    struct Ctes(HashSet<String>);
    impl VisitorMut for Ctes {
        type Break = ();
        fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
            if let Some(with) = &q.with {
                for c in &with.cte_tables {
                    self.0.insert(c.alias.name.value.clone());
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut v = Ctes(HashSet::new());
    let _ = q.visit(&mut v);
    v.0
}

fn name_parts(name: &ObjectName) -> Option<Vec<String>> {
    name.0
        .iter()
        .map(|p| match p {
            ObjectNamePart::Identifier(id) => Some(id.value.clone()),
            ObjectNamePart::Function(_) => None,
        })
        .collect()
}

/// Qualifies every unqualified table name of `q` (other than CTE names) with `db`.
fn qualify(q: &mut Query, db: Option<&str>) -> SqlResult<()> {
    struct Qualify<'a> {
        db: Option<&'a str>,
        ctes: HashSet<String>,
    }
    impl VisitorMut for Qualify<'_> {
        type Break = SqlError;
        fn pre_visit_relation(&mut self, name: &mut ObjectName) -> ControlFlow<SqlError> {
            if let [ObjectNamePart::Identifier(id)] = name.0.as_slice() {
                if self.ctes.contains(&id.value) {
                    return ControlFlow::Continue(());
                }
                let Some(db) = self.db else {
                    return ControlFlow::Break(SqlError::NoDatabaseSelected);
                };
                let table = id.clone();
                name.0 = vec![
                    ObjectNamePart::Identifier(ident(db)),
                    ObjectNamePart::Identifier(table),
                ];
            }
            ControlFlow::Continue(())
        }
    }
    let ctes = cte_names(q);
    match q.visit(&mut Qualify { db, ctes }) {
        ControlFlow::Continue(()) => Ok(()),
        ControlFlow::Break(e) => Err(e),
    }
}

/// Inlines the views `stmt` names (see the module invariants).
pub fn expand(
    stmt: &mut Statement,
    catalog: &CatalogSnapshot,
    current_db: Option<&str>,
) -> SqlResult<()> {
    struct Expand<'a> {
        catalog: &'a CatalogSnapshot,
        current_db: Option<&'a str>,
        ctes: HashSet<String>,
        expanded: usize,
    }
    impl Expand<'_> {
        fn view_for(&self, name: &ObjectName) -> Option<Arc<ViewDef>> {
            let parts = name_parts(name)?;
            let (db, view) = match parts.as_slice() {
                [v] if !self.ctes.contains(v) => (self.current_db?, v.as_str()),
                [d, v] => (d.as_str(), v.as_str()),
                _ => return None,
            };
            if self.catalog.table(db, view).is_ok() {
                return None;
            }
            self.catalog.view(db, view)
        }
    }
    impl VisitorMut for Expand<'_> {
        type Break = SqlError;
        fn pre_visit_table_factor(&mut self, t: &mut TableFactor) -> ControlFlow<SqlError> {
            let TableFactor::Table {
                name, alias, args, ..
            } = t
            else {
                return ControlFlow::Continue(());
            };
            if args.is_some() {
                return ControlFlow::Continue(());
            }
            let Some(view) = self.view_for(name) else {
                return ControlFlow::Continue(());
            };
            self.expanded += 1;
            if self.expanded > MAX_VIEW_EXPANSIONS {
                return ControlFlow::Break(SqlError::unsupported(format!(
                    "more than {MAX_VIEW_EXPANSIONS} view expansions in one query (at `{}`.`{}`)",
                    view.db, view.name
                )));
            }
            let query = match crate::plan::parse(&view.query).map(|mut s| s.pop()) {
                Ok(Some(Statement::Query(q))) => q,
                Ok(_) | Err(_) => {
                    return ControlFlow::Break(SqlError::Internal(format!(
                        "stored definition of view `{}`.`{}` does not parse",
                        view.db, view.name
                    )));
                }
            };
            let mut alias = alias.take().unwrap_or(TableAlias {
                explicit: true,
                name: ident(&view.name),
                columns: Vec::new(),
                at: None,
            });
            if alias.columns.is_empty() {
                alias.columns = view
                    .columns
                    .iter()
                    .map(|c| TableAliasColumnDef {
                        name: ident(c),
                        data_type: None,
                    })
                    .collect();
            }
            *t = TableFactor::Derived {
                lateral: false,
                subquery: query,
                alias: Some(alias),
                sample: None,
            };
            ControlFlow::Continue(())
        }
    }
    let ctes = match stmt {
        Statement::Query(q) => cte_names(q),
        _ => HashSet::new(),
    };
    let mut v = Expand {
        catalog,
        current_db,
        ctes,
        expanded: 0,
    };
    match stmt.visit(&mut v) {
        ControlFlow::Continue(()) => Ok(()),
        ControlFlow::Break(e) => Err(e),
    }
}

/// `CREATE [OR REPLACE] [ALGORITHM = …] VIEW name [(columns)] AS select`.
pub async fn create_view(
    analytics: &AnalyticsEngine,
    catalog: &Catalog,
    cv: &CreateView,
    current_db: Option<&str>,
) -> SqlResult<StatementResult> {
    let CreateView {
        or_alter,
        or_replace,
        materialized,
        secure,
        name,
        name_before_not_exists: _,
        columns,
        query,
        options,
        cluster_by,
        comment,
        with_no_schema_binding,
        if_not_exists,
        temporary,
        copy_grants,
        to,
        params,
    } = cv;
    if *or_alter
        || *materialized
        || *secure
        || !matches!(options, CreateTableOptions::None)
        || !cluster_by.is_empty()
        || comment.is_some()
        || *with_no_schema_binding
        || *if_not_exists
        || *temporary
        || *copy_grants
        || to.is_some()
    {
        return Err(SqlError::unsupported(format!(
            "this form of CREATE VIEW: {cv}"
        )));
    }
    if let Some(CreateViewParams {
        algorithm: _,
        definer,
        security,
    }) = params
        && (definer.is_some() || security.is_some())
    {
        return Err(SqlError::unsupported("DEFINER / SQL SECURITY of a view"));
    }
    let mut names = Vec::with_capacity(columns.len());
    for c in columns {
        let ViewColumnDef {
            name,
            data_type,
            options,
        } = c;
        if data_type.is_some() || options.is_some() {
            return Err(SqlError::unsupported(format!("view column definition {c}")));
        }
        names.push(name.value.clone());
    }
    let (db, view) = resolve_name(name, current_db)?;
    let mut q = query.as_ref().clone();
    qualify(&mut q, current_db)?;

    let _ddl = catalog.ddl_lock.lock().await;
    let snap = catalog.snapshot();
    if !snap.dbs.contains_key(&db) {
        return Err(SqlError::UnknownDatabase(db));
    }
    if snap.table(&db, &view).is_ok() || (snap.view(&db, &view).is_some() && !*or_replace) {
        return Err(SqlError::TableExists(view));
    }
    // Plan the definition now, over a catalog without the view being replaced.
    let mut probe = snap.as_ref().clone();
    if let Some(v) = probe.views.get_mut(&db) {
        v.remove(&view);
    }
    let reader: Arc<dyn super::RowReader> = Arc::new(catalog.engine_snapshot());
    let out = analytics
        .describe(
            Arc::new(probe),
            catalog.data().clone(),
            reader,
            Some(&db),
            &q,
        )
        .await?;
    if !names.is_empty() && names.len() != out.len() {
        return Err(SqlError::ViewColumnCount);
    }
    let shown: Vec<String> = if names.is_empty() {
        out.iter().map(|c| c.name.clone()).collect()
    } else {
        names.clone()
    };
    let mut seen = HashSet::new();
    for n in &shown {
        if !seen.insert(n.to_lowercase()) {
            return Err(SqlError::DuplicateColumn(n.clone()));
        }
    }
    let def = ViewDef {
        db: db.clone(),
        name: view.clone(),
        columns: names,
        query: q.to_string(),
    };
    let mut batch = catalog.batch();
    catalog.put_view(&mut batch, &def)?;
    catalog.commit(batch).await?;
    let mut next = snap.as_ref().clone();
    next.views
        .entry(db)
        .or_default()
        .insert(view, Arc::new(def));
    catalog.install(next);
    Ok(StatementResult::affected(0))
}

/// `DROP VIEW [IF EXISTS] v1, v2 …`: all or none (1051 names the missing ones).
pub async fn drop_views(
    catalog: &Catalog,
    names: &[ObjectName],
    if_exists: bool,
    current_db: Option<&str>,
) -> SqlResult<StatementResult> {
    let _ddl = catalog.ddl_lock.lock().await;
    let snap = catalog.snapshot();
    let mut batch = catalog.batch();
    let mut next = snap.as_ref().clone();
    let mut missing = Vec::new();
    for n in names {
        let (db, view) = resolve_name(n, current_db)?;
        match next.views.get_mut(&db).and_then(|v| v.remove(&view)) {
            Some(_) => catalog.delete_view(&mut batch, &db, &view)?,
            None => missing.push(format!("{db}.{view}")),
        }
    }
    if !missing.is_empty() && !if_exists {
        return Err(SqlError::UnknownTable(missing.join(",")));
    }
    catalog.commit(batch).await?;
    catalog.install(next);
    Ok(StatementResult::affected(0))
}
