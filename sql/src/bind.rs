//! The binder: turns sqlparser expressions into [`BExpr`] against one table scope, numbering
//! `?` placeholders in the order it meets them (callers bind clauses in textual order, so the
//! numbering matches the client's parameter order) and collecting aggregate calls into slots.
//!
//! Invariant: every expression form the evaluator cannot run is rejected here with 1235 (or the
//! MySQL error for a wrong name), never dropped.

use crate::catalog::TableDef;
use crate::error::{SqlError, SqlResult};
use crate::expr::{BExpr, CmpOp, Func};
use crate::types::{Datum, SqlType};
use crate::value::ArithOp;
use datafusion::sql::sqlparser::ast::{
    BinaryOperator, DuplicateTreatment, Expr, Function, FunctionArg, FunctionArgExpr,
    FunctionArgumentList, FunctionArguments, Ident, ObjectName, ObjectNamePart, UnaryOperator,
    Value,
};

/// Aggregate functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggFunc {
    CountStar,
    Count,
    Sum,
    Avg,
    Min,
    Max,
}

/// One aggregate call of a query.
#[derive(Debug, Clone, PartialEq)]
pub struct AggSpec {
    pub func: AggFunc,
    pub arg: Option<BExpr>,
    pub distinct: bool,
}

/// Name-resolution scope and binding state for one statement.
pub struct Binder<'a> {
    /// The table in scope (None for SELECT without FROM).
    pub table: Option<&'a TableDef>,
    /// Names that may qualify a column (table name, alias, `db.table`).
    pub qualifiers: Vec<String>,
    /// Number of `?` met so far.
    pub params: usize,
    /// Aggregate slots; `Some` while binding a clause where aggregates are allowed.
    pub aggs: Option<Vec<AggSpec>>,
    /// Clause name for 1054 messages ("field list", "where clause" …).
    pub context: &'static str,
}

/// The last identifier of an object name, or an error for function parts.
pub fn object_name_parts(name: &ObjectName) -> SqlResult<Vec<String>> {
    name.0
        .iter()
        .map(|p| match p {
            ObjectNamePart::Identifier(Ident { value, .. }) => Ok(value.clone()),
            ObjectNamePart::Function(_) => Err(SqlError::unsupported("function in object name")),
        })
        .collect()
}

/// Parses a numeric literal: integer (Int / UInt / Decimal if larger), exact decimal, or double.
pub fn number_literal(s: &str) -> SqlResult<Datum> {
    if let Ok(v) = s.parse::<i64>() {
        return Ok(Datum::Int(v));
    }
    if let Ok(v) = s.parse::<u64>() {
        return Ok(Datum::UInt(v));
    }
    if !s.contains(['e', 'E']) {
        let (int, frac) = s.split_once('.').unwrap_or((s, ""));
        if let (Ok(v), Ok(scale)) = (
            format!("{int}{frac}").parse::<i128>(),
            u8::try_from(frac.len()),
        ) {
            return Ok(Datum::Decimal { unscaled: v, scale });
        }
    }
    s.parse::<f64>()
        .map(Datum::Double)
        .map_err(|_| SqlError::Parse(s.to_string()))
}

/// A literal value as a datum (`?` is handled by the binder).
pub fn literal(v: &Value) -> SqlResult<Datum> {
    Ok(match v {
        Value::Number(n, _) => number_literal(n)?,
        Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => {
            Datum::Bytes(s.clone().into_bytes())
        }
        Value::Boolean(b) => Datum::Int(i64::from(*b)),
        Value::Null => Datum::Null,
        Value::HexStringLiteral(h) => {
            let bytes = (0..h.len())
                .step_by(2)
                .map(|i| h.get(i..i + 2).and_then(|p| u8::from_str_radix(p, 16).ok()))
                .collect::<Option<Vec<u8>>>()
                .ok_or_else(|| SqlError::Parse(format!("X'{h}'")))?;
            Datum::Bytes(bytes)
        }
        other => return Err(SqlError::unsupported(format!("literal {other}"))),
    })
}

impl<'a> Binder<'a> {
    /// A binder over `table` (qualifiable by its name and `alias`).
    #[must_use]
    pub fn new(table: Option<&'a TableDef>, alias: Option<&str>) -> Self {
        let mut qualifiers = Vec::new();
        if let Some(t) = table {
            match alias {
                Some(a) => qualifiers.push(a.to_string()),
                None => {
                    qualifiers.push(t.name.clone());
                    qualifiers.push(format!("{}.{}", t.db, t.name));
                }
            }
        }
        Self {
            table,
            qualifiers,
            params: 0,
            aggs: None,
            context: "field list",
        }
    }

    fn column(&self, qualifier: Option<String>, name: &str) -> SqlResult<BExpr> {
        let full = match &qualifier {
            Some(q) => format!("{q}.{name}"),
            None => name.to_string(),
        };
        let unknown = || SqlError::UnknownColumn {
            column: full.clone(),
            context: self.context.into(),
        };
        if let Some(q) = &qualifier
            && !self.qualifiers.iter().any(|x| x == q)
        {
            return Err(unknown());
        }
        let table = self.table.ok_or_else(unknown)?;
        table
            .column_index(name)
            .map(BExpr::Column)
            .ok_or_else(unknown)
    }

    /// Binds an expression.
    pub fn bind(&mut self, e: &Expr) -> SqlResult<BExpr> {
        let b = |x: BExpr| Box::new(x);
        Ok(match e {
            Expr::Identifier(id) => self.column(None, &id.value)?,
            Expr::CompoundIdentifier(parts) => {
                let (last, quals) = parts
                    .split_last()
                    .ok_or_else(|| SqlError::Parse(e.to_string()))?;
                let q = quals
                    .iter()
                    .map(|i| i.value.as_str())
                    .collect::<Vec<_>>()
                    .join(".");
                self.column(Some(q), &last.value)?
            }
            Expr::Value(v) => match &v.value {
                Value::Placeholder(p) if p == "?" => {
                    let i = self.params;
                    self.params += 1;
                    BExpr::Param(i)
                }
                other => BExpr::Const(literal(other)?),
            },
            Expr::Nested(inner) => self.bind(inner)?,
            Expr::IsNull(x) => BExpr::IsNull(b(self.bind(x)?), false),
            Expr::IsNotNull(x) => BExpr::IsNull(b(self.bind(x)?), true),
            Expr::IsTrue(x) => BExpr::IsTrue(b(self.bind(x)?), true, false),
            Expr::IsNotTrue(x) => BExpr::IsTrue(b(self.bind(x)?), true, true),
            Expr::IsFalse(x) => BExpr::IsTrue(b(self.bind(x)?), false, false),
            Expr::IsNotFalse(x) => BExpr::IsTrue(b(self.bind(x)?), false, true),
            Expr::Between {
                expr,
                negated,
                low,
                high,
            } => BExpr::Between {
                expr: b(self.bind(expr)?),
                low: b(self.bind(low)?),
                high: b(self.bind(high)?),
                negated: *negated,
            },
            Expr::InList {
                expr,
                list,
                negated,
            } => BExpr::InList {
                expr: b(self.bind(expr)?),
                list: list
                    .iter()
                    .map(|x| self.bind(x))
                    .collect::<SqlResult<_>>()?,
                negated: *negated,
            },
            Expr::Like {
                negated,
                any,
                expr,
                pattern,
                escape_char,
            } => {
                if *any {
                    return Err(SqlError::unsupported("LIKE ANY"));
                }
                let escape = match escape_char {
                    None => b'\\',
                    Some(v) => match &v.value {
                        Value::SingleQuotedString(s) if s.len() == 1 => {
                            s.as_bytes().first().copied().unwrap_or(b'\\')
                        }
                        _ => return Err(SqlError::WrongArguments("ESCAPE".into())),
                    },
                };
                BExpr::Like {
                    expr: b(self.bind(expr)?),
                    pattern: b(self.bind(pattern)?),
                    escape,
                    negated: *negated,
                }
            }
            Expr::UnaryOp { op, expr } => match op {
                UnaryOperator::Minus => BExpr::Neg(b(self.bind(expr)?)),
                UnaryOperator::Plus => self.bind(expr)?,
                UnaryOperator::Not | UnaryOperator::BangNot => BExpr::Not(b(self.bind(expr)?)),
                other => return Err(SqlError::unsupported(format!("operator {other}"))),
            },
            Expr::BinaryOp { left, op, right } => {
                let (l, r) = (b(self.bind(left)?), b(self.bind(right)?));
                match op {
                    BinaryOperator::Plus => BExpr::Arith(ArithOp::Add, l, r),
                    BinaryOperator::Minus => BExpr::Arith(ArithOp::Sub, l, r),
                    BinaryOperator::Multiply => BExpr::Arith(ArithOp::Mul, l, r),
                    BinaryOperator::Divide => BExpr::Arith(ArithOp::Div, l, r),
                    BinaryOperator::Modulo => BExpr::Arith(ArithOp::Mod, l, r),
                    BinaryOperator::MyIntegerDivide => BExpr::Arith(ArithOp::IntDiv, l, r),
                    BinaryOperator::Eq => BExpr::Cmp(CmpOp::Eq, l, r),
                    BinaryOperator::NotEq => BExpr::Cmp(CmpOp::NotEq, l, r),
                    BinaryOperator::Lt => BExpr::Cmp(CmpOp::Lt, l, r),
                    BinaryOperator::LtEq => BExpr::Cmp(CmpOp::LtEq, l, r),
                    BinaryOperator::Gt => BExpr::Cmp(CmpOp::Gt, l, r),
                    BinaryOperator::GtEq => BExpr::Cmp(CmpOp::GtEq, l, r),
                    BinaryOperator::Spaceship => BExpr::Cmp(CmpOp::NullSafeEq, l, r),
                    BinaryOperator::And => BExpr::And(l, r),
                    BinaryOperator::Or => BExpr::Or(l, r),
                    BinaryOperator::Xor => BExpr::Xor(l, r),
                    other => return Err(SqlError::unsupported(format!("operator {other}"))),
                }
            }
            Expr::Case {
                case_token: _,
                end_token: _,
                operand,
                conditions,
                else_result,
            } => BExpr::Case {
                operand: operand.as_ref().map(|o| self.bind(o).map(b)).transpose()?,
                whens: conditions
                    .iter()
                    .map(|w| Ok((self.bind(&w.condition)?, self.bind(&w.result)?)))
                    .collect::<SqlResult<_>>()?,
                else_result: else_result
                    .as_ref()
                    .map(|o| self.bind(o).map(b))
                    .transpose()?,
            },
            Expr::Function(f) => self.bind_function(f)?,
            Expr::Subquery(_) | Expr::InSubquery { .. } | Expr::Exists { .. } => {
                return Err(SqlError::unsupported("subqueries"));
            }
            other => return Err(SqlError::unsupported(format!("expression {other}"))),
        })
    }

    fn bind_function(&mut self, f: &Function) -> SqlResult<BExpr> {
        let Function {
            name,
            uses_odbc_syntax,
            parameters,
            args,
            filter,
            null_treatment,
            over,
            within_group,
        } = f;
        let fname = object_name_parts(name)?.join(".");
        if over.is_some() {
            return Err(SqlError::unsupported("window functions"));
        }
        if *uses_odbc_syntax
            || !matches!(parameters, FunctionArguments::None)
            || filter.is_some()
            || null_treatment.is_some()
            || !within_group.is_empty()
        {
            return Err(SqlError::unsupported(format!("this form of {fname}()")));
        }
        let (list, distinct) = match args {
            FunctionArguments::None => (Vec::new(), false),
            FunctionArguments::Subquery(_) => return Err(SqlError::unsupported("subqueries")),
            FunctionArguments::List(FunctionArgumentList {
                duplicate_treatment,
                args,
                clauses,
            }) => {
                if !clauses.is_empty() {
                    return Err(SqlError::unsupported(format!("clauses in {fname}()")));
                }
                (
                    args.iter().collect::<Vec<_>>(),
                    matches!(duplicate_treatment, Some(DuplicateTreatment::Distinct)),
                )
            }
        };
        let lower = fname.to_ascii_lowercase();
        let agg = match lower.as_str() {
            "count" => Some(AggFunc::Count),
            "sum" => Some(AggFunc::Sum),
            "avg" => Some(AggFunc::Avg),
            "min" => Some(AggFunc::Min),
            "max" => Some(AggFunc::Max),
            _ => None,
        };
        if let Some(func) = agg {
            return self.bind_aggregate(func, &fname, &list, distinct);
        }
        if distinct {
            return Err(SqlError::Parse(format!("DISTINCT in {fname}()")));
        }
        if lower == "last_insert_id" && list.is_empty() {
            return Ok(BExpr::LastInsertId);
        }
        // The function first: an argument of a function the fast path lacks may be no column
        // at all (TIMESTAMPDIFF's unit), and "unsupported" hands the statement to DataFusion.
        let (func, min, max) = Func::lookup(&lower)
            .ok_or_else(|| SqlError::unsupported(format!("function {fname}")))?;
        let mut bound = Vec::with_capacity(list.len());
        for a in &list {
            match a {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => bound.push(self.bind(e)?),
                other => {
                    return Err(SqlError::unsupported(format!(
                        "argument {other} of {fname}()"
                    )));
                }
            }
        }
        if bound.len() < min || bound.len() > max {
            return Err(SqlError::WrongArgCount(fname));
        }
        Ok(BExpr::Func(func, bound))
    }

    fn bind_aggregate(
        &mut self,
        func: AggFunc,
        fname: &str,
        list: &[&FunctionArg],
        distinct: bool,
    ) -> SqlResult<BExpr> {
        let arg = match list {
            [FunctionArg::Unnamed(FunctionArgExpr::Wildcard)]
                if func == AggFunc::Count && !distinct =>
            {
                None
            }
            [FunctionArg::Unnamed(FunctionArgExpr::Expr(e))] => {
                let Some(outer) = self.aggs.take() else {
                    return Err(SqlError::InvalidGroupFunction);
                };
                // Aggregates may not nest: bind the argument with aggregates disallowed.
                let bound = self.bind(e);
                self.aggs = Some(outer);
                Some(bound?)
            }
            _ => return Err(SqlError::WrongArgCount(fname.to_string())),
        };
        let func = if arg.is_none() {
            AggFunc::CountStar
        } else {
            func
        };
        let aggs = self.aggs.as_mut().ok_or(SqlError::InvalidGroupFunction)?;
        let spec = AggSpec {
            func,
            arg,
            distinct,
        };
        let slot = match aggs.iter().position(|a| *a == spec) {
            Some(i) => i,
            None => {
                aggs.push(spec);
                aggs.len() - 1
            }
        };
        Ok(BExpr::Agg(slot))
    }
}

/// Result type of an aggregate (`arg` = its argument's type).
#[must_use]
pub fn agg_type(func: AggFunc, arg: Option<SqlType>) -> SqlType {
    match (func, arg) {
        (AggFunc::CountStar | AggFunc::Count, _) => SqlType::BigInt { unsigned: false },
        (AggFunc::Sum, Some(SqlType::Decimal { scale, .. })) => SqlType::Decimal {
            precision: 65,
            scale,
        },
        (AggFunc::Sum, Some(t)) if t.is_integer() => SqlType::Decimal {
            precision: 65,
            scale: 0,
        },
        (AggFunc::Avg, Some(SqlType::Decimal { scale, .. })) => SqlType::Decimal {
            precision: 65,
            scale: scale.saturating_add(4),
        },
        (AggFunc::Avg, Some(t)) if t.is_integer() => SqlType::Decimal {
            precision: 65,
            scale: 4,
        },
        (AggFunc::Sum | AggFunc::Avg, _) => SqlType::Double,
        (AggFunc::Min | AggFunc::Max, t) => t.unwrap_or(SqlType::Varchar { len: 255 }),
    }
}
