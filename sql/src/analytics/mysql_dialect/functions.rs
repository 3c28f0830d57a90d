//! MySQL-semantics scalar functions registered with DataFusion (the rewrite in `rewrite.rs`
//! routes MySQL syntax to them):
//!
//! - `mysql_divide(a, b)`: MySQL `/`. Exact operands (integers as DECIMAL(digits, 0), DECIMAL)
//!   give DECIMAL with scale `s1 + div_precision_increment (4)` (at most 30) and precision
//!   `p1 + s2 + 4` (at most 38), rounded half away from zero; approximate or string operands give
//!   DOUBLE. Division by zero is NULL.
//! - `mysql_intdiv(a, b)`: MySQL `DIV`: the quotient truncated to BIGINT; by zero → NULL.
//! - `mysql_exact(x)`: integers → DECIMAL(digits, 0), anything else unchanged (so SUM and AVG of
//!   integers are DECIMAL, and AVG's scale is 4, as in MySQL).
//! - `mysql_concat(…)`: CONCAT, NULL if any argument is NULL.
//! - `mysql_substring(s, pos[, len])`, `mysql_left(s, n)`, `mysql_right(s, n)`: character
//!   positions as MySQL counts them (pos 0 → '', negative pos from the end, len ≤ 0 → '').

use datafusion::arrow::array::{
    Array, ArrayRef, Decimal128Array, Decimal128Builder, Float64Array, Int64Array, StringArray,
    StringBuilder,
};
use datafusion::arrow::datatypes::{DataType, i256};
use datafusion::common::{DataFusionError, Result as DfResult, exec_err, plan_err};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use std::sync::Arc;

/// Scale added by MySQL's `/` (the `div_precision_increment` default).
pub const DIV_PRECISION_INCREMENT: i8 = 4;
const MAX_SCALE: i8 = 30;
const MAX_PRECISION: u8 = 38;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Divide,
    IntDiv,
    Exact,
    Concat,
    Substring,
    Left,
    Right,
    CheckedAdd,
    CheckedSub,
    CheckedMul,
}

/// One MySQL function.
#[derive(Debug, PartialEq, Eq, Hash)]
struct MySqlFunction {
    kind: Kind,
    name: &'static str,
    signature: Signature,
}

/// Every function of this module, for registration.
#[must_use]
pub fn all() -> Vec<Arc<ScalarUDF>> {
    [
        (Kind::Divide, "mysql_divide"),
        (Kind::IntDiv, "mysql_intdiv"),
        (Kind::Exact, "mysql_exact"),
        (Kind::Concat, "mysql_concat"),
        (Kind::Substring, "mysql_substring"),
        (Kind::Left, "mysql_left"),
        (Kind::Right, "mysql_right"),
        (Kind::CheckedAdd, "mysql_checked_add"),
        (Kind::CheckedSub, "mysql_checked_sub"),
        (Kind::CheckedMul, "mysql_checked_mul"),
    ]
    .into_iter()
    .map(|(kind, name)| {
        Arc::new(ScalarUDF::new_from_impl(MySqlFunction {
            kind,
            name,
            signature: Signature::user_defined(Volatility::Immutable),
        }))
    })
    .collect()
}

/// The checked integer arithmetic function `name` (`mysql_checked_add` / `_sub` / `_mul`).
#[must_use]
pub fn checked(name: &'static str) -> Arc<ScalarUDF> {
    let kind = match name {
        "mysql_checked_add" => Kind::CheckedAdd,
        "mysql_checked_sub" => Kind::CheckedSub,
        _ => Kind::CheckedMul,
    };
    Arc::new(ScalarUDF::new_from_impl(MySqlFunction {
        kind,
        name,
        signature: Signature::user_defined(Volatility::Immutable),
    }))
}

/// Integer types as exact DECIMAL(digits, 0); `None` for non-integers.
fn integer_as_decimal(t: &DataType) -> Option<DataType> {
    let digits = match t {
        DataType::Int8 | DataType::UInt8 => 3,
        DataType::Int16 | DataType::UInt16 => 5,
        DataType::Int32 | DataType::UInt32 => 10,
        DataType::Int64 | DataType::Null | DataType::Boolean => 19,
        DataType::UInt64 => 20,
        _ => return None,
    };
    Some(DataType::Decimal128(digits, 0))
}

/// The operand type MySQL arithmetic uses: exact DECIMAL or DOUBLE.
fn numeric_operand(t: &DataType) -> DfResult<DataType> {
    if let Some(d) = integer_as_decimal(t) {
        return Ok(d);
    }
    match t {
        DataType::Decimal128(p, s) if *s >= 0 => Ok(DataType::Decimal128(*p, *s)),
        DataType::Float16
        | DataType::Float32
        | DataType::Float64
        | DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Utf8View => Ok(DataType::Float64),
        other => plan_err!("Incorrect arguments to division: {other}"),
    }
}

fn arith_operands(args: &[DataType]) -> DfResult<Vec<DataType>> {
    let [a, b] = args else {
        return plan_err!("Incorrect parameter count in the call to division");
    };
    let (a, b) = (numeric_operand(a)?, numeric_operand(b)?);
    if a == DataType::Float64 || b == DataType::Float64 {
        Ok(vec![DataType::Float64, DataType::Float64])
    } else {
        Ok(vec![a, b])
    }
}

fn divide_type(a: &DataType, b: &DataType) -> DataType {
    match (a, b) {
        (DataType::Decimal128(p1, s1), DataType::Decimal128(_, s2)) => {
            let scale = (*s1 + DIV_PRECISION_INCREMENT).min(MAX_SCALE);
            let extra = u8::try_from(*s2 + DIV_PRECISION_INCREMENT).unwrap_or(0);
            let precision = p1
                .saturating_add(extra)
                .min(MAX_PRECISION)
                .max(u8::try_from(scale).unwrap_or(MAX_PRECISION));
            DataType::Decimal128(precision, scale)
        }
        _ => DataType::Float64,
    }
}

fn pow10(e: u32) -> DfResult<i256> {
    i256::from_i128(10)
        .checked_pow(e)
        .ok_or_else(|| DataFusionError::Execution("DECIMAL scale out of range".into()))
}

fn out_of_range(what: &str) -> DataFusionError {
    DataFusionError::External(Box::new(crate::error::SqlError::ValueOutOfRange(format!(
        "DECIMAL value is out of range in '{what}'"
    ))))
}

/// `a / b` on unscaled decimals: the quotient at scale `s`, rounded half away from zero.
fn decimal_div(a: i128, s1: i8, b: i128, s2: i8, s: i8) -> DfResult<Option<i128>> {
    if b == 0 {
        return Ok(None);
    }
    // a/10^s1 / (b/10^s2) * 10^s = a * 10^(s2 + s - s1) / b
    let exp = i32::from(s2) + i32::from(s) - i32::from(s1);
    let (mut num, mut den) = (i256::from_i128(a), i256::from_i128(b));
    if exp >= 0 {
        num = num
            .checked_mul(pow10(exp.unsigned_abs())?)
            .ok_or_else(|| out_of_range("/"))?;
    } else {
        den = den
            .checked_mul(pow10(exp.unsigned_abs())?)
            .ok_or_else(|| out_of_range("/"))?;
    }
    let q = num.checked_div(den).ok_or_else(|| out_of_range("/"))?;
    let r = num.checked_rem(den).ok_or_else(|| out_of_range("/"))?;
    let two_r = r.wrapping_abs().checked_mul(i256::from_i128(2));
    let round_up = two_r.is_some_and(|t| t >= den.wrapping_abs());
    let q = if round_up {
        let sign = if num.is_negative() != den.is_negative() {
            i256::from_i128(-1)
        } else {
            i256::from_i128(1)
        };
        q.checked_add(sign).ok_or_else(|| out_of_range("/"))?
    } else {
        q
    };
    q.to_i128().map(Some).ok_or_else(|| out_of_range("/"))
}

/// `a DIV b` on unscaled decimals: the truncated quotient.
fn decimal_intdiv(a: i128, s1: i8, b: i128, s2: i8) -> DfResult<Option<i64>> {
    if b == 0 {
        return Ok(None);
    }
    let num = i256::from_i128(a)
        .checked_mul(pow10(u32::try_from(s2).unwrap_or(0))?)
        .ok_or_else(|| out_of_range("DIV"))?;
    let den = i256::from_i128(b)
        .checked_mul(pow10(u32::try_from(s1).unwrap_or(0))?)
        .ok_or_else(|| out_of_range("DIV"))?;
    let q = num.checked_div(den).ok_or_else(|| out_of_range("DIV"))?;
    q.to_i128()
        .and_then(|v| i64::try_from(v).ok())
        .map(Some)
        .ok_or_else(|| out_of_range("DIV"))
}

fn as_decimal(a: &ArrayRef) -> DfResult<(&Decimal128Array, i8)> {
    let arr = a
        .as_any()
        .downcast_ref::<Decimal128Array>()
        .ok_or_else(|| DataFusionError::Internal("expected a DECIMAL argument".into()))?;
    Ok((arr, arr.scale()))
}

fn as_f64(a: &ArrayRef) -> DfResult<&Float64Array> {
    a.as_any()
        .downcast_ref::<Float64Array>()
        .ok_or_else(|| DataFusionError::Internal("expected a DOUBLE argument".into()))
}

fn as_str(a: &ArrayRef) -> DfResult<&StringArray> {
    a.as_any()
        .downcast_ref::<StringArray>()
        .ok_or_else(|| DataFusionError::Internal("expected a string argument".into()))
}

fn as_i64(a: &ArrayRef) -> DfResult<&Int64Array> {
    a.as_any()
        .downcast_ref::<Int64Array>()
        .ok_or_else(|| DataFusionError::Internal("expected an integer argument".into()))
}

/// Characters `[start, start + len)` of `s` (by character, not byte).
fn char_slice(s: &str, start: usize, len: Option<usize>) -> &str {
    let mut idx = s
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(s.len()));
    let Some(from) = idx.nth(start) else {
        return "";
    };
    let to = match len {
        Some(0) => return "",
        Some(l) => s
            .char_indices()
            .map(|(i, _)| i)
            .chain(std::iter::once(s.len()))
            .nth(start.saturating_add(l))
            .unwrap_or(s.len()),
        None => s.len(),
    };
    s.get(from..to).unwrap_or("")
}

/// MySQL SUBSTRING(s, pos[, len]).
fn mysql_substring(s: &str, pos: i64, len: Option<i64>) -> &str {
    let n = s.chars().count() as i64;
    let start = match pos {
        0 => return "",
        p if p > 0 => p - 1,
        p => n + p,
    };
    if start < 0 || start >= n {
        return "";
    }
    let len = match len {
        Some(l) if l <= 0 => return "",
        Some(l) => Some(usize::try_from(l).unwrap_or(usize::MAX)),
        None => None,
    };
    char_slice(s, usize::try_from(start).unwrap_or(0), len)
}

impl MySqlFunction {
    fn divide(&self, arrays: &[ArrayRef], ret: &DataType) -> DfResult<ArrayRef> {
        let [a, b] = arrays else {
            return exec_err!("mysql_divide takes 2 arguments");
        };
        if let DataType::Decimal128(p, s) = ret {
            let ((a, s1), (b, s2)) = (as_decimal(a)?, as_decimal(b)?);
            let mut out = Decimal128Builder::with_capacity(a.len());
            for i in 0..a.len() {
                if a.is_null(i) || b.is_null(i) {
                    out.append_null();
                    continue;
                }
                out.append_option(decimal_div(a.value(i), s1, b.value(i), s2, *s)?);
            }
            return Ok(Arc::new(out.finish().with_precision_and_scale(*p, *s)?));
        }
        let (a, b) = (as_f64(a)?, as_f64(b)?);
        let out: Float64Array = a
            .iter()
            .zip(b.iter())
            .map(|(x, y)| match (x, y) {
                (Some(x), Some(y)) if y != 0.0 => Some(x / y),
                _ => None,
            })
            .collect();
        Ok(Arc::new(out))
    }

    fn intdiv(&self, arrays: &[ArrayRef]) -> DfResult<ArrayRef> {
        let [a, b] = arrays else {
            return exec_err!("mysql_intdiv takes 2 arguments");
        };
        let mut out = Vec::with_capacity(a.len());
        if matches!(a.data_type(), DataType::Decimal128(..)) {
            let ((a, s1), (b, s2)) = (as_decimal(a)?, as_decimal(b)?);
            for i in 0..a.len() {
                out.push(if a.is_null(i) || b.is_null(i) {
                    None
                } else {
                    decimal_intdiv(a.value(i), s1, b.value(i), s2)?
                });
            }
        } else {
            let (a, b) = (as_f64(a)?, as_f64(b)?);
            for (x, y) in a.iter().zip(b.iter()) {
                out.push(match (x, y) {
                    (Some(x), Some(y)) if y != 0.0 => {
                        let q = (x / y).trunc();
                        if q.abs() >= 9.2e18 {
                            return Err(out_of_range("DIV"));
                        }
                        Some(q as i64)
                    }
                    _ => None,
                });
            }
        }
        Ok(Arc::new(Int64Array::from(out)))
    }

    fn strings(&self, arrays: &[ArrayRef], rows: usize) -> DfResult<ArrayRef> {
        let mut out = StringBuilder::with_capacity(rows, rows * 8);
        match self.kind {
            Kind::Concat => {
                let cols = arrays.iter().map(as_str).collect::<DfResult<Vec<_>>>()?;
                let mut buf = String::new();
                for i in 0..rows {
                    buf.clear();
                    let mut null = false;
                    for c in &cols {
                        if c.is_null(i) {
                            null = true;
                            break;
                        }
                        buf.push_str(c.value(i));
                    }
                    if null {
                        out.append_null();
                    } else {
                        out.append_value(&buf);
                    }
                }
            }
            Kind::Substring | Kind::Left | Kind::Right => {
                let s =
                    as_str(arrays.first().ok_or_else(|| {
                        DataFusionError::Internal("missing string argument".into())
                    })?)?;
                let n = as_i64(arrays.get(1).ok_or_else(|| {
                    DataFusionError::Internal("missing position argument".into())
                })?)?;
                let len = arrays.get(2).map(as_i64).transpose()?;
                for i in 0..rows {
                    if s.is_null(i) || n.is_null(i) || len.is_some_and(|l| l.is_null(i)) {
                        out.append_null();
                        continue;
                    }
                    let (v, k) = (s.value(i), n.value(i));
                    let r = match self.kind {
                        Kind::Substring => mysql_substring(v, k, len.map(|l| l.value(i))),
                        Kind::Left if k <= 0 => "",
                        Kind::Left => char_slice(v, 0, Some(usize::try_from(k).unwrap_or(0))),
                        _ if k <= 0 => "",
                        _ => {
                            let total = v.chars().count();
                            let k = usize::try_from(k).unwrap_or(usize::MAX).min(total);
                            char_slice(v, total - k, None)
                        }
                    };
                    out.append_value(r);
                }
            }
            _ => return exec_err!("{} is not a string function", self.name),
        }
        Ok(Arc::new(out.finish()))
    }
}

impl ScalarUDFImpl for MySqlFunction {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, args: &[DataType]) -> DfResult<Vec<DataType>> {
        let count = |ok: bool| {
            if ok {
                Ok(())
            } else {
                plan_err!(
                    "Incorrect parameter count in the call to native function '{}'",
                    self.name.trim_start_matches("mysql_")
                )
            }
        };
        match self.kind {
            Kind::Divide | Kind::IntDiv => arith_operands(args),
            Kind::Exact => {
                count(args.len() == 1)?;
                Ok(args.to_vec())
            }
            Kind::Concat => {
                count(!args.is_empty())?;
                Ok(vec![DataType::Utf8; args.len()])
            }
            Kind::Substring => {
                count(args.len() == 2 || args.len() == 3)?;
                let mut t = vec![DataType::Utf8];
                t.resize(args.len(), DataType::Int64);
                Ok(t)
            }
            Kind::Left | Kind::Right => {
                count(args.len() == 2)?;
                Ok(vec![DataType::Utf8, DataType::Int64])
            }
            Kind::CheckedAdd | Kind::CheckedSub | Kind::CheckedMul => {
                count(args.len() == 2)?;
                let t = if args.contains(&DataType::UInt64) {
                    DataType::UInt64
                } else {
                    DataType::Int64
                };
                Ok(vec![t.clone(), t])
            }
        }
    }

    fn return_type(&self, args: &[DataType]) -> DfResult<DataType> {
        Ok(match self.kind {
            Kind::Divide => match args {
                [a, b] => divide_type(a, b),
                _ => return plan_err!("mysql_divide takes 2 arguments"),
            },
            Kind::IntDiv => DataType::Int64,
            Kind::Exact => match args.first() {
                Some(t) => integer_as_decimal(t)
                    .filter(|_| !matches!(t, DataType::Null | DataType::Boolean))
                    .unwrap_or_else(|| t.clone()),
                None => return plan_err!("mysql_exact takes 1 argument"),
            },
            Kind::Concat | Kind::Substring | Kind::Left | Kind::Right => DataType::Utf8,
            Kind::CheckedAdd | Kind::CheckedSub | Kind::CheckedMul => {
                if args.contains(&DataType::UInt64) {
                    DataType::UInt64
                } else {
                    DataType::Int64
                }
            }
        })
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let rows = args.number_rows;
        let ret = args.return_type().clone();
        if self.kind == Kind::Exact {
            let [v] = args.args.as_slice() else {
                return exec_err!("mysql_exact takes 1 argument");
            };
            return v.cast_to(&ret, None);
        }
        let arrays: Vec<ArrayRef> = args
            .args
            .iter()
            .map(|a| a.clone().into_array(rows))
            .collect::<DfResult<_>>()?;
        let out = match self.kind {
            Kind::CheckedAdd | Kind::CheckedSub | Kind::CheckedMul => {
                let [a, b] = arrays.as_slice() else {
                    return exec_err!("{} takes 2 arguments", self.name);
                };
                use datafusion::arrow::compute::kernels::numeric;
                // The checked kernels fail with ArithmeticOverflow (→ 1690) instead of wrapping.
                match self.kind {
                    Kind::CheckedAdd => numeric::add(a, b)?,
                    Kind::CheckedSub => numeric::sub(a, b)?,
                    _ => numeric::mul(a, b)?,
                }
            }
            Kind::Divide => self.divide(&arrays, &ret)?,
            Kind::IntDiv => self.intdiv(&arrays)?,
            _ => self.strings(&arrays, rows)?,
        };
        Ok(ColumnarValue::Array(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_division_rounds_half_away_from_zero_at_scale_plus_four() {
        // 1 / 3 = 0.3333 (scale 0 + 4)
        assert_eq!(decimal_div(1, 0, 3, 0, 4).unwrap(), Some(3333));
        // 2 / 3 = 0.6667
        assert_eq!(decimal_div(2, 0, 3, 0, 4).unwrap(), Some(6667));
        assert_eq!(decimal_div(-2, 0, 3, 0, 4).unwrap(), Some(-6667));
        // 10.00 / 4.0 = 2.500000 (scale 2 + 4)
        assert_eq!(decimal_div(1000, 2, 40, 1, 6).unwrap(), Some(2_500_000));
        assert_eq!(decimal_div(5, 0, 0, 0, 4).unwrap(), None);
        assert_eq!(
            divide_type(&DataType::Decimal128(15, 2), &DataType::Decimal128(15, 2)),
            DataType::Decimal128(21, 6)
        );
    }

    #[test]
    fn integer_division_truncates() {
        assert_eq!(decimal_intdiv(75, 1, 2, 0).unwrap(), Some(3));
        assert_eq!(decimal_intdiv(-7, 0, 2, 0).unwrap(), Some(-3));
        assert_eq!(decimal_intdiv(79, 1, 5, 1).unwrap(), Some(15));
        assert_eq!(decimal_intdiv(1, 0, 0, 0).unwrap(), None);
    }

    #[test]
    fn substring_counts_like_mysql() {
        assert_eq!(mysql_substring("Quadratically", 5, None), "ratically");
        assert_eq!(mysql_substring("Quadratically", 5, Some(6)), "ratica");
        assert_eq!(mysql_substring("Sakila", -3, None), "ila");
        assert_eq!(mysql_substring("Sakila", -5, Some(3)), "aki");
        assert_eq!(mysql_substring("Sakila", 0, None), "");
        assert_eq!(mysql_substring("Sakila", 2, Some(0)), "");
        assert_eq!(mysql_substring("Sakila", -10, None), "");
        assert_eq!(mysql_substring("añb", 2, Some(1)), "ñ");
    }
}
