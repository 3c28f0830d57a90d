//! Syntax-level MySQL → DataFusion rewrite of a parsed query (sqlparser AST, MySQL dialect).
//!
//! Identifiers: table names, table aliases and CTE names are quoted so the planner keeps their
//! case (case-sensitive, as MySQL on Linux); column names, column aliases and quoted column
//! identifiers are lower-cased (case-insensitive, as MySQL's), matching the lower-cased field
//! names of the table providers.
//!
//! Expressions (bottom-up, each node rewritten once):
//! - `DATE_ADD/ADDDATE/DATE_SUB/SUBDATE(d, INTERVAL n unit)` → `d ± INTERVAL 'n' unit`; a string
//!   literal `d` is cast to DATE (day-or-larger units and a `YYYY-MM-DD` literal) or TIMESTAMP;
//!   `INTERVAL n unit` with a numeric `n` becomes `INTERVAL 'n' unit`; compound units
//!   (`DAY_HOUR` …) and non-literal amounts are rejected with 1235.
//! - `a / b` → `mysql_divide(a, b)` (DECIMAL result, scale + 4, NULL on zero); `a DIV b` →
//!   `mysql_intdiv`; `a % b`, `MOD(a, b)` → `a % NULLIF(b, 0)`; `||` → OR (MySQL's default
//!   sql_mode has no PIPES_AS_CONCAT).
//! - `LIKE` → `ILIKE` (case-insensitive collation); `SUM`/`AVG` of integers are computed in
//!   DECIMAL through `mysql_exact`, as MySQL does.
//! - `IF` → CASE, `IFNULL` → COALESCE, `CONCAT` → `mysql_concat` (NULL if any argument is NULL),
//!   `SUBSTRING/SUBSTR/MID`, `LEFT`, `RIGHT` → MySQL-semantics UDFs, `LENGTH` → `octet_length`,
//!   `LOG(x)` → `ln(x)`, `STD/STDDEV` → `stddev_pop`, `VARIANCE` → `var_pop`,
//!   `YEAR/MONTH/DAY/…(d)` → `EXTRACT`, `UCASE/LCASE` → `upper/lower`.
//! - `DATE`, `DATEDIFF`, `DAYOFWEEK`, `WEEKDAY`, `DAYOFMONTH`, `DAYOFYEAR`, `LAST_DAY`,
//!   `DATE_FORMAT` → `mysql_…` UDFs; `TIMESTAMPDIFF(UNIT, a, b)` → `mysql_timestampdiff('UNIT',
//!   a, b)`; `STR_TO_DATE(s, 'fmt')` → `mysql_str_to_date` or `mysql_str_to_datetime` by the
//!   literal format (a non-literal format is rejected); `CAST(x AS SIGNED | UNSIGNED |
//!   DATETIME[(p)])` → `mysql_cast_signed` / `mysql_cast_unsigned` / `mysql_datetime(x, p)`.
//! - Case-insensitive collation for `REGEXP/RLIKE` (→ `~*`), `INSTR` and `POSITION … IN`.
//! - `"text"` is a string literal (no ANSI_QUOTES); `?` placeholders become `$1, $2, …`.

use crate::error::SqlError;
use datafusion::sql::sqlparser::ast::helpers::attached_token::AttachedToken;
use datafusion::sql::sqlparser::ast::{
    BinaryOperator, CaseWhen, CastKind, DataType, DateTimeField, Expr, ExtractSyntax, Function,
    FunctionArg, FunctionArgExpr, FunctionArgumentList, FunctionArguments, Ident, Interval,
    ObjectName, ObjectNamePart, Query, Select, SelectItem, SelectItemQualifiedWildcardKind,
    SetExpr, TableFactor, UnaryOperator, Value, ValueWithSpan, VisitMut, VisitorMut,
};
use datafusion::sql::sqlparser::tokenizer::Span;
use std::ops::ControlFlow;

/// Gives repeated result column names of the top-level SELECT unique internal aliases
/// (MySQL allows `SELECT a, a`; DataFusion requires unique names). `names` are the MySQL names
/// ([`super::output_names`]) that the result keeps.
pub fn dedupe_output_names(q: &mut Query, names: &[String]) {
    let SetExpr::Select(select) = q.body.as_mut() else {
        return;
    };
    let mut seen = std::collections::HashSet::new();
    for (i, (item, name)) in select.projection.iter_mut().zip(names).enumerate() {
        if seen.insert(name.to_lowercase()) {
            continue;
        }
        let alias = ident(&format!("{name}#{i}"));
        let taken = std::mem::replace(item, SelectItem::Wildcard(Default::default()));
        *item = match taken {
            SelectItem::UnnamedExpr(expr) | SelectItem::ExprWithAlias { expr, .. } => {
                SelectItem::ExprWithAlias { expr, alias }
            }
            other => other,
        };
    }
}

/// Rewrites `node` in place.
pub fn rewrite<T: VisitMut>(node: &mut T) -> Result<(), SqlError> {
    let mut v = MySqlRewriter { placeholders: 0 };
    match node.visit(&mut v) {
        ControlFlow::Continue(()) => Ok(()),
        ControlFlow::Break(e) => Err(*e),
    }
}

struct MySqlRewriter {
    placeholders: usize,
}

fn quote(id: &mut Ident) {
    if id.quote_style.is_none() {
        id.quote_style = Some('`');
    }
}

fn lower(id: &mut Ident) {
    id.value = id.value.to_lowercase();
}

fn quote_name(name: &mut ObjectName) {
    for part in &mut name.0 {
        if let ObjectNamePart::Identifier(id) = part {
            quote(id);
        }
    }
}

fn ident(name: &str) -> Ident {
    Ident {
        value: name.to_string(),
        quote_style: None,
        span: Span::empty(),
    }
}

/// A plain function call `name(args…)`.
pub(super) fn call(name: &str, args: Vec<Expr>) -> Expr {
    Expr::Function(Function {
        name: ObjectName(vec![ObjectNamePart::Identifier(ident(name))]),
        uses_odbc_syntax: false,
        parameters: FunctionArguments::None,
        args: FunctionArguments::List(FunctionArgumentList {
            duplicate_treatment: None,
            args: args
                .into_iter()
                .map(|e| FunctionArg::Unnamed(FunctionArgExpr::Expr(e)))
                .collect(),
            clauses: Vec::new(),
        }),
        filter: None,
        null_treatment: None,
        over: None,
        within_group: Vec::new(),
    })
}

fn string_lit(s: String) -> Expr {
    Expr::Value(ValueWithSpan {
        value: Value::SingleQuotedString(s),
        span: Span::empty(),
    })
}

fn unsupported<T>(what: impl Into<String>) -> ControlFlow<Box<SqlError>, T> {
    ControlFlow::Break(Box::new(SqlError::unsupported(what)))
}

fn wrong_args<T>(name: &str) -> ControlFlow<Box<SqlError>, T> {
    ControlFlow::Break(Box::new(SqlError::WrongArgCount(name.to_uppercase())))
}

/// Plain positional arguments of a call (None when it has other argument forms).
fn plain_args(f: &Function) -> Option<Vec<Expr>> {
    let FunctionArguments::List(list) = &f.args else {
        return match f.args {
            FunctionArguments::None => Some(Vec::new()),
            _ => None,
        };
    };
    if list.duplicate_treatment.is_some() || !list.clauses.is_empty() {
        return None;
    }
    list.args
        .iter()
        .map(|a| match a {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e.clone()),
            _ => None,
        })
        .collect()
}

/// True for units of a day or more (a DATE stays a DATE when shifted by them).
fn date_unit(f: &DateTimeField) -> bool {
    matches!(
        f,
        DateTimeField::Year
            | DateTimeField::Years
            | DateTimeField::Month
            | DateTimeField::Months
            | DateTimeField::Week(_)
            | DateTimeField::Weeks
            | DateTimeField::Day
            | DateTimeField::Days
            | DateTimeField::Quarter
    )
}

fn simple_unit(f: &DateTimeField) -> bool {
    date_unit(f)
        || matches!(
            f,
            DateTimeField::Hour
                | DateTimeField::Hours
                | DateTimeField::Minute
                | DateTimeField::Minutes
                | DateTimeField::Second
                | DateTimeField::Seconds
                | DateTimeField::Microsecond
                | DateTimeField::Microseconds
        )
}

/// Normalizes `INTERVAL n unit` in place: a numeric amount becomes a string literal.
fn normalize_interval(iv: &mut Interval) -> ControlFlow<Box<SqlError>> {
    let Some(unit) = &iv.leading_field else {
        return unsupported(format!("INTERVAL without a unit: {iv}"));
    };
    if iv.last_field.is_some() || !simple_unit(unit) {
        return unsupported(format!("INTERVAL unit in {iv}"));
    }
    // The ANSI leading precision (`DAY (3)`) is not MySQL syntax; it does not change values.
    iv.leading_precision = None;
    let text = match iv.value.as_ref() {
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) => n.clone(),
            Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => s.trim().to_string(),
            _ => return unsupported(format!("INTERVAL amount {}", iv.value)),
        },
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => match expr.as_ref() {
            Expr::Value(ValueWithSpan {
                value: Value::Number(n, _),
                ..
            }) => format!("-{n}"),
            _ => return unsupported(format!("INTERVAL amount {}", iv.value)),
        },
        _ => return unsupported(format!("non-constant INTERVAL amount {}", iv.value)),
    };
    // MySQL rounds a fractional amount of a simple unit; only whole amounts are taken here.
    if text.parse::<i64>().is_err() {
        return unsupported(format!("INTERVAL amount {}", iv.value));
    }
    *iv.value = string_lit(text);
    ControlFlow::Continue(())
}

/// A string literal used as a date or datetime operand of interval arithmetic.
fn date_operand(e: Expr, unit_is_date: bool) -> Expr {
    let literal = match &e {
        Expr::Value(ValueWithSpan {
            value: Value::SingleQuotedString(s) | Value::DoubleQuotedString(s),
            ..
        }) => Some(s.clone()),
        _ => None,
    };
    if !unit_is_date && !matches!(e, Expr::Interval(_)) {
        // A DATE shifted by hours or less is a DATETIME in MySQL.
        return Expr::Cast {
            kind: CastKind::Cast,
            expr: Box::new(e),
            data_type: DataType::Timestamp(
                None,
                datafusion::sql::sqlparser::ast::TimezoneInfo::None,
            ),
            array: false,
            format: None,
        };
    }
    match literal {
        Some(s) => Expr::Cast {
            kind: CastKind::Cast,
            expr: Box::new(e),
            data_type: if unit_is_date && s.trim().len() <= 10 {
                DataType::Date
            } else {
                DataType::Timestamp(None, datafusion::sql::sqlparser::ast::TimezoneInfo::None)
            },
            array: false,
            format: None,
        },
        None => e,
    }
}

fn interval_arith(name: &str, args: Vec<Expr>, add: bool) -> ControlFlow<Box<SqlError>, Expr> {
    let [d, amount]: [Expr; 2] = match args.try_into() {
        Ok(a) => a,
        Err(_) => return wrong_args(name),
    };
    let mut iv = match amount {
        Expr::Interval(iv) => iv,
        // ADDDATE(d, n) / SUBDATE(d, n): n days.
        other if name == "adddate" || name == "subdate" => Interval {
            value: Box::new(other),
            leading_field: Some(DateTimeField::Day),
            leading_precision: None,
            last_field: None,
            fractional_seconds_precision: None,
        },
        other => return ControlFlow::Break(Box::new(SqlError::Parse(other.to_string()))),
    };
    normalize_interval(&mut iv)?;
    let is_date = iv.leading_field.as_ref().is_some_and(date_unit);
    ControlFlow::Continue(Expr::BinaryOp {
        left: Box::new(date_operand(d, is_date)),
        op: if add {
            BinaryOperator::Plus
        } else {
            BinaryOperator::Minus
        },
        right: Box::new(Expr::Interval(iv)),
    })
}

/// Never evaluated: the placeholder value of a `Break` that already carries the error.
fn unreachable_expr() -> Expr {
    Expr::Value(ValueWithSpan {
        value: Value::Null,
        span: Span::empty(),
    })
}

fn extract(field: DateTimeField, e: Expr) -> Expr {
    Expr::Extract {
        field,
        syntax: ExtractSyntax::From,
        expr: Box::new(e),
    }
}

fn null_if_zero(e: Expr) -> Expr {
    call(
        "nullif",
        vec![
            e,
            Expr::Value(ValueWithSpan {
                value: Value::Number("0".into(), false),
                span: Span::empty(),
            }),
        ],
    )
}

fn rename(f: &mut Function, name: &str) {
    f.name = ObjectName(vec![ObjectNamePart::Identifier(ident(name))]);
}

fn wrap_first_arg(f: &mut Function, udf: &str) {
    if let FunctionArguments::List(list) = &mut f.args
        && let Some(FunctionArg::Unnamed(FunctionArgExpr::Expr(e))) = list.args.first_mut()
    {
        let inner = std::mem::replace(e, unreachable_expr());
        *e = call(udf, vec![inner]);
    }
}

/// `TIMESTAMPDIFF(unit, a, b)` → `mysql_timestampdiff('UNIT', a, b)`.
fn timestampdiff(args: Option<Vec<Expr>>) -> ControlFlow<Box<SqlError>, Expr> {
    let Some(Ok([unit, a, b])) = args.map(<[Expr; 3]>::try_from) else {
        return wrong_args("timestampdiff");
    };
    let unit = match &unit {
        Expr::Identifier(id) if id.quote_style.is_none() => id.value.to_uppercase(),
        _ => return unsupported(format!("TIMESTAMPDIFF unit {unit}")),
    };
    if !super::date_functions::is_timestampdiff_unit(&unit) {
        return unsupported(format!("TIMESTAMPDIFF unit {unit}"));
    }
    ControlFlow::Continue(call("mysql_timestampdiff", vec![string_lit(unit), a, b]))
}

/// `STR_TO_DATE(s, 'format')` → `mysql_str_to_date` (DATE) when the format has no time-of-day
/// specifier, else `mysql_str_to_datetime` (DATETIME), as MySQL types it by the format.
fn str_to_date(args: Option<Vec<Expr>>) -> ControlFlow<Box<SqlError>, Expr> {
    let Some(Ok([s, format])) = args.map(<[Expr; 2]>::try_from) else {
        return wrong_args("str_to_date");
    };
    let udf = match &format {
        Expr::Value(ValueWithSpan {
            value: Value::SingleQuotedString(f),
            ..
        }) if super::date_text::format_has_time(f) => "mysql_str_to_datetime",
        Expr::Value(ValueWithSpan {
            value: Value::SingleQuotedString(_) | Value::Null,
            ..
        }) => "mysql_str_to_date",
        _ => return unsupported(format!("STR_TO_DATE with a non-literal format {format}")),
    };
    ControlFlow::Continue(call(udf, vec![s, format]))
}

/// `CAST(x AS SIGNED | UNSIGNED | DATETIME[(p)])` → the MySQL-semantics UDF; other casts stay.
fn mysql_cast(e: &mut Expr) -> ControlFlow<Box<SqlError>, Option<Expr>> {
    let Expr::Cast {
        kind,
        expr,
        data_type,
        array,
        format,
    } = e
    else {
        return ControlFlow::Continue(None);
    };
    let mysql_only = matches!(
        data_type,
        DataType::Signed
            | DataType::SignedInteger
            | DataType::Unsigned
            | DataType::UnsignedInteger
            | DataType::Datetime(_)
    );
    if mysql_only && (!matches!(kind, CastKind::Cast) || *array || format.is_some()) {
        return unsupported(format!("this form of CAST to {data_type}"));
    }
    let udf_args = |x: &mut Box<Expr>| vec![std::mem::replace(x.as_mut(), unreachable_expr())];
    let (udf, args) = match data_type {
        DataType::Signed | DataType::SignedInteger => ("mysql_cast_signed", udf_args(expr)),
        DataType::Unsigned | DataType::UnsignedInteger => ("mysql_cast_unsigned", udf_args(expr)),
        DataType::Datetime(p) => {
            let p = p.unwrap_or(0);
            if p > 6 {
                return unsupported(format!("DATETIME precision {p}"));
            }
            let mut a = udf_args(expr);
            a.push(Expr::Value(ValueWithSpan {
                value: Value::Number(p.to_string(), false),
                span: Span::empty(),
            }));
            ("mysql_datetime", a)
        }
        _ => return ControlFlow::Continue(None),
    };
    ControlFlow::Continue(Some(call(udf, args)))
}

impl MySqlRewriter {
    fn rewrite_function(&mut self, f: &mut Function) -> ControlFlow<Box<SqlError>, Option<Expr>> {
        let name = match f.name.0.as_slice() {
            [ObjectNamePart::Identifier(id)] => id.value.to_lowercase(),
            _ => return ControlFlow::Continue(None),
        };
        let args = || plain_args(f);
        let replaced = match name.as_str() {
            "date_add" | "adddate" | "date_sub" | "subdate" => {
                let Some(a) = args() else {
                    return wrong_args(&name);
                };
                Some(interval_arith(
                    &name,
                    a,
                    name == "date_add" || name == "adddate",
                )?)
            }
            "if" => match args().map(<[Expr; 3]>::try_from) {
                Some(Ok([c, a, b])) => Some(Expr::Case {
                    case_token: AttachedToken::empty(),
                    end_token: AttachedToken::empty(),
                    operand: None,
                    conditions: vec![CaseWhen {
                        condition: c,
                        result: a,
                    }],
                    else_result: Some(Box::new(b)),
                }),
                _ => return wrong_args("if"),
            },
            "ifnull" => {
                rename(f, "coalesce");
                None
            }
            "concat" => {
                rename(f, "mysql_concat");
                None
            }
            "substring" | "substr" | "mid" => {
                rename(f, "mysql_substring");
                None
            }
            "left" => {
                rename(f, "mysql_left");
                None
            }
            "right" => {
                rename(f, "mysql_right");
                None
            }
            "length" => {
                rename(f, "octet_length");
                None
            }
            "ucase" => {
                rename(f, "upper");
                None
            }
            "lcase" => {
                rename(f, "lower");
                None
            }
            // Substring search follows the case-insensitive collation.
            "instr" => match args().map(<[Expr; 2]>::try_from) {
                Some(Ok([a, b])) => Some(call(
                    "instr",
                    vec![call("lower", vec![a]), call("lower", vec![b])],
                )),
                _ => return wrong_args("instr"),
            },
            "std" | "stddev" => {
                rename(f, "stddev_pop");
                None
            }
            "variance" => {
                rename(f, "var_pop");
                None
            }
            "log" if args().is_some_and(|a| a.len() == 1) => {
                rename(f, "ln");
                None
            }
            "mod" => match args().map(<[Expr; 2]>::try_from) {
                Some(Ok([a, b])) => Some(Expr::BinaryOp {
                    left: Box::new(a),
                    op: BinaryOperator::Modulo,
                    right: Box::new(null_if_zero(b)),
                }),
                _ => return wrong_args("mod"),
            },
            "sum" | "avg" => {
                wrap_first_arg(f, "mysql_exact");
                None
            }
            "date" | "datediff" | "dayofweek" | "weekday" | "dayofmonth" | "dayofyear"
            | "last_day" | "date_format" => {
                let arity = if name == "datediff" || name == "date_format" {
                    2
                } else {
                    1
                };
                match args() {
                    Some(a) if a.len() == arity => Some(call(&format!("mysql_{name}"), a)),
                    _ => return wrong_args(&name),
                }
            }
            "timestampdiff" => Some(timestampdiff(args())?),
            "str_to_date" => Some(str_to_date(args())?),
            "year" | "month" | "day" | "hour" | "minute" | "second" | "quarter" => {
                let field = match name.as_str() {
                    "year" => DateTimeField::Year,
                    "month" => DateTimeField::Month,
                    "day" => DateTimeField::Day,
                    "hour" => DateTimeField::Hour,
                    "minute" => DateTimeField::Minute,
                    "second" => DateTimeField::Second,
                    _ => DateTimeField::Quarter,
                };
                match args().map(<[Expr; 1]>::try_from) {
                    Some(Ok([d])) => Some(extract(field, d)),
                    _ => return wrong_args(&name),
                }
            }
            _ => None,
        };
        ControlFlow::Continue(replaced)
    }
}

impl VisitorMut for MySqlRewriter {
    type Break = Box<SqlError>;

    fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<Self::Break> {
        // Locking reads need the engine's locks; the analytical executor only reads snapshots.
        if !q.locks.is_empty() {
            return unsupported("SELECT … FOR UPDATE / FOR SHARE in the analytical executor");
        }
        if q.for_clause.is_some()
            || q.settings.is_some()
            || q.format_clause.is_some()
            || !q.pipe_operators.is_empty()
        {
            return unsupported(format!("this form of query: {q}"));
        }
        if let Some(with) = &mut q.with {
            for cte in &mut with.cte_tables {
                quote(&mut cte.alias.name);
                for c in &mut cte.alias.columns {
                    lower(&mut c.name);
                }
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_select(&mut self, s: &mut Select) -> ControlFlow<Self::Break> {
        if s.into.is_some() {
            return unsupported("SELECT … INTO");
        }
        if s.select_modifiers.is_some() {
            return unsupported(format!("SELECT modifiers in {s}"));
        }
        for item in &mut s.projection {
            match item {
                SelectItem::ExprWithAlias { alias, .. } => lower(alias),
                SelectItem::QualifiedWildcard(
                    SelectItemQualifiedWildcardKind::ObjectName(n),
                    _,
                ) => quote_name(n),
                _ => {}
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_relation(&mut self, name: &mut ObjectName) -> ControlFlow<Self::Break> {
        quote_name(name);
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, t: &mut TableFactor) -> ControlFlow<Self::Break> {
        let alias = match t {
            TableFactor::Table { alias, .. }
            | TableFactor::Derived { alias, .. }
            | TableFactor::NestedJoin { alias, .. } => alias.as_mut(),
            _ => None,
        };
        if let Some(a) = alias {
            quote(&mut a.name);
            for c in &mut a.columns {
                lower(&mut c.name);
            }
        }
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<Self::Break> {
        let replacement = match e {
            Expr::Identifier(id) => {
                lower(id);
                None
            }
            Expr::CompoundIdentifier(parts) => {
                let n = parts.len();
                for (i, p) in parts.iter_mut().enumerate() {
                    if i + 1 == n {
                        lower(p);
                    } else {
                        quote(p);
                    }
                }
                None
            }
            Expr::Value(v) => match &mut v.value {
                Value::DoubleQuotedString(s) => {
                    v.value = Value::SingleQuotedString(std::mem::take(s));
                    None
                }
                Value::Placeholder(p) if p == "?" => {
                    self.placeholders += 1;
                    *p = format!("${}", self.placeholders);
                    None
                }
                _ => None,
            },
            Expr::Interval(iv) => {
                normalize_interval(iv)?;
                None
            }
            Expr::BinaryOp { left, op, right } => match op {
                BinaryOperator::Divide => Some(call(
                    "mysql_divide",
                    vec![
                        std::mem::replace(left, unreachable_expr()),
                        std::mem::replace(right, unreachable_expr()),
                    ],
                )),
                BinaryOperator::MyIntegerDivide => Some(call(
                    "mysql_intdiv",
                    vec![
                        std::mem::replace(left, unreachable_expr()),
                        std::mem::replace(right, unreachable_expr()),
                    ],
                )),
                BinaryOperator::Modulo => {
                    let r = std::mem::replace(right.as_mut(), unreachable_expr());
                    **right = null_if_zero(r);
                    None
                }
                BinaryOperator::StringConcat => {
                    *op = BinaryOperator::Or;
                    None
                }
                BinaryOperator::Plus | BinaryOperator::Minus => {
                    let unit = match (left.as_ref(), right.as_ref()) {
                        (_, Expr::Interval(iv)) | (Expr::Interval(iv), _) => {
                            iv.leading_field.as_ref().map(date_unit)
                        }
                        _ => None,
                    };
                    if let Some(is_date) = unit {
                        let l = std::mem::replace(left.as_mut(), unreachable_expr());
                        **left = date_operand(l, is_date);
                        let r = std::mem::replace(right.as_mut(), unreachable_expr());
                        **right = date_operand(r, is_date);
                    }
                    None
                }
                _ => None,
            },
            Expr::Like {
                negated,
                any,
                expr,
                pattern,
                escape_char,
            } => Some(Expr::ILike {
                negated: *negated,
                any: *any,
                expr: Box::new(std::mem::replace(expr.as_mut(), unreachable_expr())),
                pattern: Box::new(std::mem::replace(pattern.as_mut(), unreachable_expr())),
                escape_char: escape_char.take(),
            }),
            Expr::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => {
                let mut args = vec![std::mem::replace(expr.as_mut(), unreachable_expr())];
                match substring_from.take() {
                    Some(f) => args.push(*f),
                    None => return unsupported("SUBSTRING without a start position"),
                }
                if let Some(l) = substring_for.take() {
                    args.push(*l);
                }
                Some(call("mysql_substring", args))
            }
            Expr::Function(f) => self.rewrite_function(f)?,
            Expr::Cast { .. } => mysql_cast(e)?,
            // REGEXP / RLIKE match case-insensitively under the default collation.
            Expr::RLike {
                negated,
                expr,
                pattern,
                ..
            } => Some(Expr::BinaryOp {
                left: Box::new(std::mem::replace(expr.as_mut(), unreachable_expr())),
                op: if *negated {
                    BinaryOperator::PGRegexNotIMatch
                } else {
                    BinaryOperator::PGRegexIMatch
                },
                right: Box::new(std::mem::replace(pattern.as_mut(), unreachable_expr())),
            }),
            Expr::Position { expr, r#in } => Some(call(
                "strpos",
                vec![
                    call(
                        "lower",
                        vec![std::mem::replace(r#in.as_mut(), unreachable_expr())],
                    ),
                    call(
                        "lower",
                        vec![std::mem::replace(expr.as_mut(), unreachable_expr())],
                    ),
                ],
            )),
            _ => None,
        };
        if let Some(r) = replacement {
            *e = r;
        }
        ControlFlow::Continue(())
    }
}
