//! Type-aware part of the dialect, applied to the logical plan after SQL planning, when operand
//! types are known:
//!
//! - Integer `+`, `-`, `*` become `mysql_checked_{add,sub,mul}` (BIGINT, or BIGINT UNSIGNED when
//!   an operand is), which fail with 1690 on overflow as MySQL does instead of wrapping.
//! - String comparisons follow MySQL's default collation (`utf8mb4_0900_ai_ci`).
//!
//! Collation covered: `=`, `<>`, `<`, `<=`, `>`, `>=`, `BETWEEN`, `IN (…)` and USING / equi-join keys
//! between two character strings compare their `lower()` forms (case-insensitive for every
//! character Unicode lower-cases, which includes ASCII). `LIKE` is made `ILIKE` by the syntax
//! rewrite. Binary strings (BLOB) are untouched: they compare bytewise, as in MySQL.
//!
//! `ORDER BY` a string sorts by its `lower()` form (equal-under-collation values come in no
//! particular order, as in MySQL).
//!
//! `GROUP BY` and `SELECT DISTINCT` on strings group by the `lower()` form and show one member
//! of each group (the smallest bytewise; MySQL shows the first it met).
//!
//! Not covered (DataFusion compares bytes): accent-insensitivity (`'é' = 'e'`), COUNT(DISTINCT),
//! UNION's duplicate removal, MIN/MAX, window PARTITION/ORDER BY, `IN (SELECT …)` and `CASE x WHEN 'a'` on
//! strings, which MySQL groups, orders and matches case-insensitively.

use datafusion::arrow::datatypes::DataType;
use datafusion::common::Column;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DFSchema, Result as DfResult};
use datafusion::functions::string::expr_fn::lower;
use datafusion::functions_aggregate::expr_fn::min;
use datafusion::logical_expr::expr::{InList, ScalarFunction};
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::{Aggregate, Distinct, Projection};
use datafusion::logical_expr::{Between, BinaryExpr, Expr, ExprSchemable, LogicalPlan, Operator};
use std::sync::Arc;

fn is_string(e: &Expr, schema: &DFSchema) -> bool {
    matches!(
        e.get_type(schema),
        Ok(DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
    )
}

fn fold(e: Expr) -> Expr {
    lower(e)
}

fn is_integer(e: &Expr, schema: &DFSchema) -> bool {
    e.get_type(schema).is_ok_and(|t| t.is_integer())
}

fn rewrite_expr(e: Expr, schema: &DFSchema) -> DfResult<Transformed<Expr>> {
    match e {
        Expr::BinaryExpr(BinaryExpr { left, op, right })
            if matches!(op, Operator::Plus | Operator::Minus | Operator::Multiply)
                && is_integer(&left, schema)
                && is_integer(&right, schema) =>
        {
            let name = match op {
                Operator::Plus => "mysql_checked_add",
                Operator::Minus => "mysql_checked_sub",
                _ => "mysql_checked_mul",
            };
            Ok(Transformed::yes(Expr::ScalarFunction(
                ScalarFunction::new_udf(super::functions::checked(name), vec![*left, *right]),
            )))
        }
        Expr::BinaryExpr(BinaryExpr { left, op, right })
            if matches!(
                op,
                Operator::Eq
                    | Operator::NotEq
                    | Operator::Lt
                    | Operator::LtEq
                    | Operator::Gt
                    | Operator::GtEq
            ) && is_string(&left, schema)
                && is_string(&right, schema) =>
        {
            Ok(Transformed::yes(Expr::BinaryExpr(BinaryExpr::new(
                Box::new(fold(*left)),
                op,
                Box::new(fold(*right)),
            ))))
        }
        Expr::Between(b)
            if is_string(&b.expr, schema)
                && is_string(&b.low, schema)
                && is_string(&b.high, schema) =>
        {
            Ok(Transformed::yes(Expr::Between(Between::new(
                Box::new(fold(*b.expr)),
                b.negated,
                Box::new(fold(*b.low)),
                Box::new(fold(*b.high)),
            ))))
        }
        Expr::InList(l)
            if is_string(&l.expr, schema) && l.list.iter().all(|x| is_string(x, schema)) =>
        {
            Ok(Transformed::yes(Expr::InList(InList::new(
                Box::new(fold(*l.expr)),
                l.list.into_iter().map(fold).collect(),
                l.negated,
            ))))
        }
        other => Ok(Transformed::no(other)),
    }
}

/// The schema expressions of `node` are evaluated against: its inputs merged.
fn input_schema(node: &LogicalPlan) -> DfResult<DFSchema> {
    let inputs = node.inputs();
    let mut it = inputs.iter();
    let Some(first) = it.next() else {
        return Ok(node.schema().as_ref().clone());
    };
    let mut schema = first.schema().as_ref().clone();
    for other in it {
        schema.merge(other.schema());
    }
    Ok(schema)
}

/// Applies the typed rewrites to every expression of `plan`, subqueries included.
pub fn apply(plan: LogicalPlan) -> DfResult<LogicalPlan> {
    Ok(plan
        .transform_up_with_subqueries(|node| {
            let schema = input_schema(&node)?;
            let node = match node {
                LogicalPlan::Join(mut j) => {
                    let (l, r) = (j.left.schema().clone(), j.right.schema().clone());
                    let mut changed = false;
                    j.on =
                        j.on.into_iter()
                            .map(|(a, b)| {
                                if is_string(&a, &l) && is_string(&b, &r) {
                                    changed = true;
                                    (fold(a), fold(b))
                                } else {
                                    (a, b)
                                }
                            })
                            .collect();
                    let t = if changed {
                        Transformed::yes(LogicalPlan::Join(j))
                    } else {
                        Transformed::no(LogicalPlan::Join(j))
                    };
                    // The join filter is rewritten below with the other expressions.
                    t.data
                }
                // ORDER BY a string sorts case-insensitively (the collation); the sorted values
                // themselves are unchanged.
                LogicalPlan::Sort(mut sort) => {
                    for k in &mut sort.expr {
                        if is_string(&k.expr, &schema) {
                            k.expr = fold(k.expr.clone());
                        }
                    }
                    LogicalPlan::Sort(sort)
                }
                other => other,
            };
            // Parents refer to this node's outputs by name: keep the names of rewritten
            // projections and aggregates.
            let names = NamePreserver::new(&node);
            let t = node.map_expressions(|e| {
                let saved = names.save(&e);
                Ok(e.transform_up(|e| rewrite_expr(e, &schema))?
                    .update_data(|e| saved.restore(e)))
            })?;
            // Checked arithmetic may widen a result type (INT + INT is BIGINT in MySQL).
            let t = if t.transformed {
                t.map_data(LogicalPlan::recompute_schema)?
            } else {
                t
            };
            t.transform_data(group_case_insensitively)
        })?
        .data)
}

/// GROUP BY and DISTINCT on strings group case-insensitively: the group key becomes
/// `lower(x)` and the shown value is one member of the group (`min(x)`), under the original
/// output name, as MySQL shows one of the rows' values.
fn group_case_insensitively(node: LogicalPlan) -> DfResult<Transformed<LogicalPlan>> {
    let (input, group_expr, aggr_expr, out_schema) = match node {
        LogicalPlan::Aggregate(a)
            if a.group_expr
                .iter()
                .any(|g| !matches!(g, Expr::GroupingSet(_)) && is_string(g, a.input.schema()))
                && !a
                    .group_expr
                    .iter()
                    .any(|g| matches!(g, Expr::GroupingSet(_))) =>
        {
            (a.input, a.group_expr, a.aggr_expr, a.schema)
        }
        LogicalPlan::Distinct(Distinct::All(input))
            if input.schema().fields().iter().any(|f| {
                matches!(
                    f.data_type(),
                    DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
                )
            }) =>
        {
            let group: Vec<Expr> = input
                .schema()
                .columns()
                .into_iter()
                .map(Expr::Column)
                .collect();
            let schema = input.schema().clone();
            (input, group, Vec::new(), schema)
        }
        other => return Ok(Transformed::no(other)),
    };
    let in_schema = input.schema().clone();
    let mut keys = Vec::with_capacity(group_expr.len());
    let mut shown = Vec::new();
    let mut string_keys = Vec::new();
    for (i, g) in group_expr.iter().enumerate() {
        if is_string(g, &in_schema) {
            keys.push(fold(g.clone()).alias(format!("__ci_key_{i}")));
            shown.push(min(g.clone()).alias(format!("__ci_value_{i}")));
            string_keys.push(i);
        } else {
            keys.push(g.clone());
        }
    }
    let n_keys = keys.len();
    let n_shown = shown.len();
    let mut aggs = shown;
    aggs.extend(aggr_expr.iter().cloned());
    let agg = LogicalPlan::Aggregate(Aggregate::try_new(input, keys, aggs)?);
    let agg_schema = agg.schema().clone();
    let column = |i: usize| -> DfResult<Expr> {
        let (q, f) = agg_schema.qualified_field(i);
        Ok(Expr::Column(Column::new(q.cloned(), f.name())))
    };
    let mut exprs = Vec::with_capacity(out_schema.fields().len());
    for i in 0..group_expr.len() {
        let src = match string_keys.iter().position(|&k| k == i) {
            Some(j) => column(n_keys + j)?,
            None => column(i)?,
        };
        let (q, f) = out_schema.qualified_field(i);
        exprs.push(src.alias_qualified(q.cloned(), f.name()));
    }
    for j in 0..aggr_expr.len() {
        let (q, f) = out_schema.qualified_field(group_expr.len() + j);
        exprs.push(column(n_keys + n_shown + j)?.alias_qualified(q.cloned(), f.name()));
    }
    Ok(Transformed::yes(LogicalPlan::Projection(
        Projection::try_new(exprs, Arc::new(agg))?,
    )))
}
