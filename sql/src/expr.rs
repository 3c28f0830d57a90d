//! Bound expressions ([`BExpr`]): column references by position, parameters by index, aggregate
//! slots, constants, operators and the supported functions; plus their evaluation over a row and
//! constant folding.
//!
//! Life of an expression: the binder (`bind.rs`) builds it once per prepared statement; every
//! execution calls [`BExpr::bind_params`] (parameters and session values become constants) and
//! [`BExpr::fold`] (constant subtrees are evaluated), so `id BETWEEN ? AND ?` and
//! `id BETWEEN 5 AND 5+99` reach the access-path chooser in the same shape.

use crate::error::{SqlError, SqlResult};
use crate::types::{Datum, SqlType};
use crate::value::{self, ArithOp};
use std::cmp::Ordering;

/// Comparison operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    NotEq,
    Lt,
    LtEq,
    Gt,
    GtEq,
    /// `<=>`: NULL-safe equality.
    NullSafeEq,
}

impl CmpOp {
    /// The operator with its operands swapped (`5 < id` ⇔ `id > 5`).
    #[must_use]
    pub fn flip(self) -> Self {
        match self {
            Self::Lt => Self::Gt,
            Self::LtEq => Self::GtEq,
            Self::Gt => Self::Lt,
            Self::GtEq => Self::LtEq,
            other => other,
        }
    }

    fn test(self, o: Ordering) -> bool {
        match self {
            Self::Eq | Self::NullSafeEq => o == Ordering::Equal,
            Self::NotEq => o != Ordering::Equal,
            Self::Lt => o == Ordering::Less,
            Self::LtEq => o != Ordering::Greater,
            Self::Gt => o == Ordering::Greater,
            Self::GtEq => o != Ordering::Less,
        }
    }
}

/// Scalar functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Func {
    Coalesce,
    IfNull,
    If,
    NullIf,
    Concat,
    Length,
    CharLength,
    Upper,
    Lower,
    Abs,
    Round,
}

impl Func {
    /// Looks a function up by (case-insensitive) name with its accepted argument counts.
    #[must_use]
    pub fn lookup(name: &str) -> Option<(Self, usize, usize)> {
        Some(match name.to_ascii_lowercase().as_str() {
            "coalesce" => (Self::Coalesce, 1, usize::MAX),
            "ifnull" => (Self::IfNull, 2, 2),
            "if" => (Self::If, 3, 3),
            "nullif" => (Self::NullIf, 2, 2),
            "concat" => (Self::Concat, 1, usize::MAX),
            "length" | "octet_length" => (Self::Length, 1, 1),
            "char_length" | "character_length" => (Self::CharLength, 1, 1),
            "upper" | "ucase" => (Self::Upper, 1, 1),
            "lower" | "lcase" => (Self::Lower, 1, 1),
            "abs" => (Self::Abs, 1, 1),
            "round" => (Self::Round, 1, 2),
            _ => return None,
        })
    }
}

/// A bound expression.
#[derive(Debug, Clone, PartialEq)]
pub enum BExpr {
    Const(Datum),
    Column(usize),
    Param(usize),
    /// The value of aggregate slot `i` for the current group.
    Agg(usize),
    /// `LAST_INSERT_ID()`: the session's value, substituted at execution.
    LastInsertId,
    Neg(Box<BExpr>),
    Not(Box<BExpr>),
    Arith(ArithOp, Box<BExpr>, Box<BExpr>),
    Cmp(CmpOp, Box<BExpr>, Box<BExpr>),
    And(Box<BExpr>, Box<BExpr>),
    Or(Box<BExpr>, Box<BExpr>),
    Xor(Box<BExpr>, Box<BExpr>),
    IsNull(Box<BExpr>, bool),
    IsTrue(Box<BExpr>, bool, bool),
    Between {
        expr: Box<BExpr>,
        low: Box<BExpr>,
        high: Box<BExpr>,
        negated: bool,
    },
    InList {
        expr: Box<BExpr>,
        list: Vec<BExpr>,
        negated: bool,
    },
    Like {
        expr: Box<BExpr>,
        pattern: Box<BExpr>,
        escape: u8,
        negated: bool,
    },
    Case {
        operand: Option<Box<BExpr>>,
        whens: Vec<(BExpr, BExpr)>,
        else_result: Option<Box<BExpr>>,
    },
    Func(Func, Vec<BExpr>),
}

fn bool_datum(b: Option<bool>) -> Datum {
    b.map_or(Datum::Null, |b| Datum::Int(i64::from(b)))
}

fn text_of(d: &Datum) -> Option<Vec<u8>> {
    value::to_text(d)
}

impl BExpr {
    /// Applies `f` to every direct child.
    fn children_mut(&mut self, f: &mut dyn FnMut(&mut BExpr)) {
        match self {
            Self::Const(_)
            | Self::Column(_)
            | Self::Param(_)
            | Self::Agg(_)
            | Self::LastInsertId => {}
            Self::Neg(a) | Self::Not(a) | Self::IsNull(a, _) | Self::IsTrue(a, _, _) => f(a),
            Self::Arith(_, a, b)
            | Self::Cmp(_, a, b)
            | Self::And(a, b)
            | Self::Or(a, b)
            | Self::Xor(a, b) => {
                f(a);
                f(b);
            }
            Self::Between {
                expr, low, high, ..
            } => {
                f(expr);
                f(low);
                f(high);
            }
            Self::InList { expr, list, .. } => {
                f(expr);
                list.iter_mut().for_each(f);
            }
            Self::Like { expr, pattern, .. } => {
                f(expr);
                f(pattern);
            }
            Self::Case {
                operand,
                whens,
                else_result,
            } => {
                if let Some(o) = operand {
                    f(o);
                }
                for (w, t) in whens {
                    f(w);
                    f(t);
                }
                if let Some(e) = else_result {
                    f(e);
                }
            }
            Self::Func(_, args) => args.iter_mut().for_each(f),
        }
    }

    /// Replaces parameters and session values by constants.
    pub fn bind_params(&mut self, params: &[Datum], last_insert_id: u64) -> SqlResult<()> {
        match self {
            Self::Param(i) => {
                let d = params
                    .get(*i)
                    .cloned()
                    .ok_or_else(|| SqlError::WrongArguments("mysqld_stmt_execute".into()))?;
                *self = Self::Const(d);
                Ok(())
            }
            Self::LastInsertId => {
                *self = Self::Const(Datum::UInt(last_insert_id));
                Ok(())
            }
            _ => {
                let mut res = Ok(());
                self.children_mut(&mut |c| {
                    if res.is_ok() {
                        res = c.bind_params(params, last_insert_id);
                    }
                });
                res
            }
        }
    }

    /// Evaluates every constant subtree. Errors of constant subtrees surface here.
    pub fn fold(&mut self) -> SqlResult<()> {
        self.fold_constness().map(|_| ())
    }

    /// [`BExpr::fold`], returning whether the expression reads no column, aggregate or
    /// parameter (it is then a `Const`): a node is constant when all its children are.
    fn fold_constness(&mut self) -> SqlResult<bool> {
        match self {
            Self::Const(_) => return Ok(true),
            Self::Column(_) | Self::Param(_) | Self::Agg(_) | Self::LastInsertId => {
                return Ok(false);
            }
            _ => {}
        }
        let mut res = Ok(());
        let mut all = true;
        self.children_mut(&mut |c| {
            if res.is_ok() {
                match c.fold_constness() {
                    Ok(is_const) => all &= is_const,
                    Err(e) => res = Err(e),
                }
            }
        });
        res?;
        if all {
            *self = Self::Const(self.eval(&[], &[])?);
        }
        Ok(all)
    }

    /// Evaluates over `row` (column values) and `aggs` (aggregate slots of the current group).
    pub fn eval(&self, row: &[Datum], aggs: &[Datum]) -> SqlResult<Datum> {
        Ok(match self {
            Self::Const(d) => d.clone(),
            Self::Column(i) => row
                .get(*i)
                .cloned()
                .ok_or_else(|| SqlError::Internal(format!("column #{i} out of row")))?,
            Self::Agg(i) => aggs
                .get(*i)
                .cloned()
                .ok_or_else(|| SqlError::Internal(format!("aggregate #{i} missing")))?,
            Self::Param(_) | Self::LastInsertId => {
                return Err(SqlError::Internal("unbound parameter at evaluation".into()));
            }
            Self::Neg(a) => value::negate(&a.eval(row, aggs)?)?,
            Self::Not(a) => bool_datum(value::truth(&a.eval(row, aggs)?).map(|b| !b)),
            Self::Arith(op, a, b) => value::arith(*op, &a.eval(row, aggs)?, &b.eval(row, aggs)?)?,
            Self::Cmp(op, a, b) => {
                let (x, y) = (a.eval(row, aggs)?, b.eval(row, aggs)?);
                if *op == CmpOp::NullSafeEq {
                    let eq = match (x.is_null(), y.is_null()) {
                        (true, true) => true,
                        (false, false) => value::compare(&x, &y) == Some(Ordering::Equal),
                        _ => false,
                    };
                    return Ok(bool_datum(Some(eq)));
                }
                bool_datum(value::compare(&x, &y).map(|o| op.test(o)))
            }
            Self::And(a, b) => {
                let x = value::truth(&a.eval(row, aggs)?);
                if x == Some(false) {
                    return Ok(Datum::Int(0));
                }
                let y = value::truth(&b.eval(row, aggs)?);
                bool_datum(match (x, y) {
                    (_, Some(false)) => Some(false),
                    (Some(true), Some(true)) => Some(true),
                    _ => None,
                })
            }
            Self::Or(a, b) => {
                let x = value::truth(&a.eval(row, aggs)?);
                if x == Some(true) {
                    return Ok(Datum::Int(1));
                }
                let y = value::truth(&b.eval(row, aggs)?);
                bool_datum(match (x, y) {
                    (_, Some(true)) => Some(true),
                    (Some(false), Some(false)) => Some(false),
                    _ => None,
                })
            }
            Self::Xor(a, b) => {
                let x = value::truth(&a.eval(row, aggs)?);
                let y = value::truth(&b.eval(row, aggs)?);
                bool_datum(x.zip(y).map(|(x, y)| x != y))
            }
            Self::IsNull(a, negated) => bool_datum(Some(a.eval(row, aggs)?.is_null() != *negated)),
            Self::IsTrue(a, want, negated) => {
                let t = value::truth(&a.eval(row, aggs)?);
                bool_datum(Some((t == Some(*want)) != *negated))
            }
            Self::Between {
                expr,
                low,
                high,
                negated,
            } => {
                let v = expr.eval(row, aggs)?;
                let lo = value::compare(&v, &low.eval(row, aggs)?).map(|o| o != Ordering::Less);
                let hi = value::compare(&v, &high.eval(row, aggs)?).map(|o| o != Ordering::Greater);
                let r = match (lo, hi) {
                    (Some(false), _) | (_, Some(false)) => Some(false),
                    (Some(true), Some(true)) => Some(true),
                    _ => None,
                };
                bool_datum(if *negated { r.map(|b| !b) } else { r })
            }
            Self::InList {
                expr,
                list,
                negated,
            } => {
                let v = expr.eval(row, aggs)?;
                let mut found = Some(false);
                for item in list {
                    match value::compare(&v, &item.eval(row, aggs)?) {
                        Some(Ordering::Equal) => {
                            found = Some(true);
                            break;
                        }
                        None => found = None,
                        Some(_) => {}
                    }
                }
                bool_datum(if *negated { found.map(|b| !b) } else { found })
            }
            Self::Like {
                expr,
                pattern,
                escape,
                negated,
            } => {
                let (v, p) = (expr.eval(row, aggs)?, pattern.eval(row, aggs)?);
                match (text_of(&v), text_of(&p)) {
                    (Some(t), Some(p)) => {
                        bool_datum(Some(value::like(&t, &p, *escape) != *negated))
                    }
                    _ => Datum::Null,
                }
            }
            Self::Case {
                operand,
                whens,
                else_result,
            } => {
                let op = operand.as_ref().map(|o| o.eval(row, aggs)).transpose()?;
                for (w, t) in whens {
                    let wv = w.eval(row, aggs)?;
                    let hit = match &op {
                        Some(o) => value::compare(o, &wv) == Some(Ordering::Equal),
                        None => value::truth(&wv) == Some(true),
                    };
                    if hit {
                        return t.eval(row, aggs);
                    }
                }
                match else_result {
                    Some(e) => e.eval(row, aggs)?,
                    None => Datum::Null,
                }
            }
            Self::Func(f, args) => {
                let vals = args
                    .iter()
                    .map(|a| a.eval(row, aggs))
                    .collect::<SqlResult<Vec<_>>>()?;
                eval_func(*f, vals)?
            }
        })
    }

    /// Static result type for column metadata (`table` = column types of the scanned table).
    #[must_use]
    pub fn result_type(&self, table: &[SqlType], aggs: &[SqlType]) -> SqlType {
        const BIG: SqlType = SqlType::BigInt { unsigned: false };
        const TEXT: SqlType = SqlType::Varchar { len: 255 };
        match self {
            Self::Const(d) => match d {
                Datum::Int(_) | Datum::Null => BIG,
                Datum::UInt(_) => SqlType::BigInt { unsigned: true },
                Datum::Double(_) => SqlType::Double,
                Datum::Decimal { unscaled, scale } => SqlType::Decimal {
                    precision: u8::try_from(unscaled.unsigned_abs().to_string().len())
                        .unwrap_or(65)
                        .max(*scale),
                    scale: *scale,
                },
                Datum::Bytes(b) => SqlType::Varchar {
                    len: u32::try_from(b.len()).unwrap_or(u32::MAX),
                },
                Datum::Date(_) => SqlType::Date,
                Datum::DateTime(_) => SqlType::DateTime,
            },
            Self::Column(i) => table.get(*i).copied().unwrap_or(TEXT),
            Self::Agg(i) => aggs.get(*i).copied().unwrap_or(BIG),
            Self::Param(_) => TEXT,
            Self::LastInsertId => SqlType::BigInt { unsigned: true },
            Self::Neg(a) => a.result_type(table, aggs),
            Self::Arith(op, a, b) => {
                let (x, y) = (a.result_type(table, aggs), b.result_type(table, aggs));
                let dec = |t: SqlType| match t {
                    SqlType::Decimal { scale, .. } => Some(scale),
                    t if t.is_integer() => Some(0),
                    _ => None,
                };
                match (dec(x), dec(y)) {
                    (Some(0), Some(0)) if !matches!(op, ArithOp::Div) => BIG,
                    (Some(sx), Some(sy)) => {
                        let scale = match op {
                            ArithOp::Div => sx.saturating_add(value::DIV_PRECISION_INCREMENT),
                            ArithOp::Mul => sx.saturating_add(sy),
                            _ => sx.max(sy),
                        };
                        SqlType::Decimal {
                            precision: 65,
                            scale,
                        }
                    }
                    _ => SqlType::Double,
                }
            }
            Self::Func(Func::Length | Func::CharLength, _) => BIG,
            Self::Func(Func::Concat | Func::Upper | Func::Lower, _) => TEXT,
            Self::Func(Func::Abs | Func::Round, args) => {
                args.first().map_or(BIG, |a| a.result_type(table, aggs))
            }
            Self::Func(Func::Coalesce | Func::IfNull | Func::NullIf, args) => {
                args.first().map_or(TEXT, |a| a.result_type(table, aggs))
            }
            Self::Func(Func::If, args) => args.get(1).map_or(TEXT, |a| a.result_type(table, aggs)),
            Self::Case { whens, .. } => whens
                .first()
                .map_or(TEXT, |(_, t)| t.result_type(table, aggs)),
            _ => BIG,
        }
    }

    /// Adds the positions of the columns read outside aggregates (aggregate arguments live in
    /// their `AggSpec`, not in the tree).
    pub fn columns(&self, out: &mut Vec<usize>) {
        if let Self::Column(i) = self {
            out.push(*i);
            return;
        }
        let mut copy = self.clone();
        copy.children_mut(&mut |c| c.columns(out));
    }

    /// Conjuncts of an AND tree.
    #[must_use]
    pub fn conjuncts(&self) -> Vec<&BExpr> {
        match self {
            Self::And(a, b) => {
                let mut v = a.conjuncts();
                v.extend(b.conjuncts());
                v
            }
            other => vec![other],
        }
    }
}

fn eval_func(f: Func, vals: Vec<Datum>) -> SqlResult<Datum> {
    if f == Func::Coalesce {
        return Ok(vals
            .into_iter()
            .find(|v| !v.is_null())
            .unwrap_or(Datum::Null));
    }
    if f == Func::Concat {
        let mut out = Vec::new();
        for v in &vals {
            match text_of(v) {
                Some(t) => out.extend_from_slice(&t),
                None => return Ok(Datum::Null),
            }
        }
        return Ok(Datum::Bytes(out));
    }
    let mut it = vals.into_iter();
    let mut next = || it.next().unwrap_or(Datum::Null);
    Ok(match f {
        Func::IfNull => {
            let (a, b) = (next(), next());
            if a.is_null() { b } else { a }
        }
        Func::If => {
            let (c, a, b) = (next(), next(), next());
            if value::truth(&c) == Some(true) { a } else { b }
        }
        Func::NullIf => {
            let (a, b) = (next(), next());
            if value::compare(&a, &b) == Some(Ordering::Equal) {
                Datum::Null
            } else {
                a
            }
        }
        Func::Coalesce => Datum::Null,
        Func::Concat => Datum::Null,
        Func::Length => text_of(&next()).map_or(Datum::Null, |t| {
            Datum::Int(i64::try_from(t.len()).unwrap_or(i64::MAX))
        }),
        Func::CharLength => text_of(&next()).map_or(Datum::Null, |t| {
            Datum::Int(
                i64::try_from(String::from_utf8_lossy(&t).chars().count()).unwrap_or(i64::MAX),
            )
        }),
        Func::Upper => text_of(&next()).map_or(Datum::Null, |t| {
            Datum::Bytes(String::from_utf8_lossy(&t).to_uppercase().into_bytes())
        }),
        Func::Lower => text_of(&next()).map_or(Datum::Null, |t| {
            Datum::Bytes(String::from_utf8_lossy(&t).to_lowercase().into_bytes())
        }),
        Func::Abs => {
            let v = next();
            match value::compare(&v, &Datum::Int(0)) {
                None => Datum::Null,
                Some(Ordering::Less) => value::negate(&v)?,
                Some(_) => match v {
                    Datum::Bytes(_) => Datum::Double(value::to_f64(&v).unwrap_or(0.0)),
                    other => other,
                },
            }
        }
        Func::Round => {
            let (v, d) = (next(), next());
            let digits = if d.is_null() {
                0
            } else {
                value::to_f64(&d).unwrap_or(0.0) as i64
            };
            if v.is_null() {
                Datum::Null
            } else {
                value::round(&v, digits)
            }
        }
    })
}
