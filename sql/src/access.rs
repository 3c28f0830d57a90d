//! Access-path choice and row fetching. The chooser runs on the filter AFTER parameters are bound
//! and constants folded, so a cached plan never freezes "unknown bounds → full scan".
//!
//! Invariant: an access path returns a SUPERSET of the rows the filter accepts; the executor
//! re-applies the whole filter, except when [`filter_is_exact`] proves the access path returns
//! exactly the filter's rows (integer comparisons on a single-column integer primary key). That
//! is why bounds may be conservative: only integer key columns are used for ranges (text keys
//! are stored in binary order while comparisons use the case-insensitive collation, so a key
//! range over text could miss rows).

use crate::catalog::Table;
use crate::codec::key;
use crate::error::{SqlError, SqlResult};
use crate::expr::{BExpr, CmpOp};
use crate::rowio;
use crate::stmt_ctx::StmtCtx;
use crate::types::{Datum, SqlType};
use crate::value;
use orcinus_storage::{Direction, prefix_upper_bound};
use std::collections::BTreeSet;
use std::ops::Bound;

/// How rows are found.
#[derive(Debug, Clone, PartialEq)]
pub enum Access {
    /// The filter can never be true.
    Empty,
    /// Every row, filtered.
    FullScan,
    /// Point gets on a single-column primary key.
    PkPoints(Vec<Datum>),
    /// Inclusive range on the first primary-key column.
    PkRange {
        lo: Option<Datum>,
        hi: Option<Datum>,
    },
    /// Inclusive range (or points) on the first column of secondary index `ix`.
    IndexRange {
        ix: usize,
        lo: Option<Datum>,
        hi: Option<Datum>,
    },
}

impl Access {
    /// Rows the path may yield when that is known to be few (points, a short integer key
    /// range), else 0: a capacity hint for the result.
    #[must_use]
    pub fn row_estimate(&self) -> usize {
        const MAX_HINT: i128 = 1024;
        match self {
            Self::PkPoints(p) => p.len(),
            Self::PkRange {
                lo: Some(Datum::Int(l)),
                hi: Some(Datum::Int(h)),
            } => usize::try_from((i128::from(*h) - i128::from(*l) + 1).clamp(0, MAX_HINT))
                .unwrap_or(0),
            _ => 0,
        }
    }
}

enum Constraint {
    Points(BTreeSet<i128>),
    Range(Option<i128>, Option<i128>),
}

/// (floor, ceil) of a constant as integers; `None` for NULL (comparisons with NULL are never true).
fn int_bounds(d: &Datum) -> Option<(i128, i128)> {
    match d {
        Datum::Null => None,
        Datum::Int(v) => Some((i128::from(*v), i128::from(*v))),
        Datum::UInt(v) => Some((i128::from(*v), i128::from(*v))),
        Datum::Decimal { unscaled, scale } => {
            let div = 10i128.checked_pow(u32::from(*scale))?;
            let f = unscaled.div_euclid(div);
            Some((
                f,
                if unscaled.rem_euclid(div) == 0 {
                    f
                } else {
                    f + 1
                },
            ))
        }
        other => {
            let f = value::to_f64(other)?;
            if !f.is_finite() || f.abs() > 1e30 {
                return Some((i128::MIN / 2, i128::MAX / 2)).filter(|_| f.is_finite());
            }
            Some((f.floor() as i128, f.ceil() as i128))
        }
    }
}

fn column_constraint(conjuncts: &[&BExpr], col: usize) -> Option<Constraint> {
    let mut lo: Option<i128> = None;
    let mut hi: Option<i128> = None;
    let mut points: Option<BTreeSet<i128>> = None;
    let mut used = false;
    let empty = Some(Constraint::Points(BTreeSet::new()));
    let raise = |v: i128, lo: &mut Option<i128>| *lo = Some(lo.map_or(v, |l| l.max(v)));
    let lower = |v: i128, hi: &mut Option<i128>| *hi = Some(hi.map_or(v, |h| h.min(v)));
    for c in conjuncts {
        match c {
            BExpr::Cmp(op, a, b) => {
                let (op, k) = match (a.as_ref(), b.as_ref()) {
                    (BExpr::Column(x), BExpr::Const(k)) if *x == col => (*op, k),
                    (BExpr::Const(k), BExpr::Column(x)) if *x == col => (op.flip(), k),
                    _ => continue,
                };
                if op == CmpOp::NotEq || op == CmpOp::NullSafeEq && k.is_null() {
                    continue;
                }
                let Some((f, ce)) = int_bounds(k) else {
                    return empty;
                };
                used = true;
                match op {
                    CmpOp::Eq | CmpOp::NullSafeEq => {
                        if f != ce {
                            return empty;
                        }
                        raise(f, &mut lo);
                        lower(f, &mut hi);
                    }
                    CmpOp::Lt => lower(ce - 1, &mut hi),
                    CmpOp::LtEq => lower(f, &mut hi),
                    CmpOp::Gt => raise(f + 1, &mut lo),
                    CmpOp::GtEq => raise(ce, &mut lo),
                    CmpOp::NotEq => {}
                }
            }
            BExpr::Between {
                expr,
                low,
                high,
                negated: false,
            } => {
                let (BExpr::Column(x), BExpr::Const(l), BExpr::Const(h)) =
                    (expr.as_ref(), low.as_ref(), high.as_ref())
                else {
                    continue;
                };
                if *x != col {
                    continue;
                }
                let (Some((_, lc)), Some((hf, _))) = (int_bounds(l), int_bounds(h)) else {
                    return empty;
                };
                used = true;
                raise(lc, &mut lo);
                lower(hf, &mut hi);
            }
            BExpr::InList {
                expr,
                list,
                negated: false,
            } => {
                if !matches!(expr.as_ref(), BExpr::Column(x) if *x == col) {
                    continue;
                }
                let mut set = BTreeSet::new();
                for item in list {
                    let BExpr::Const(k) = item else {
                        set.clear();
                        break;
                    };
                    if let Some((f, ce)) = int_bounds(k)
                        && f == ce
                    {
                        set.insert(f);
                    }
                }
                if list.iter().all(|i| matches!(i, BExpr::Const(_))) {
                    used = true;
                    points = Some(match points {
                        Some(p) => p.intersection(&set).copied().collect(),
                        None => set,
                    });
                }
            }
            _ => {}
        }
    }
    if !used {
        return None;
    }
    Some(match points {
        Some(p) => Constraint::Points(
            p.into_iter()
                .filter(|v| lo.is_none_or(|l| *v >= l) && hi.is_none_or(|h| *v <= h))
                .collect(),
        ),
        None => match (lo, hi) {
            (Some(l), Some(h)) if l == h => Constraint::Points(BTreeSet::from([l])),
            (Some(l), Some(h)) if l > h => Constraint::Points(BTreeSet::new()),
            _ => Constraint::Range(lo, hi),
        },
    })
}

fn to_key_datum(v: i128, ty: SqlType) -> Option<Datum> {
    let (min, max) = ty.integer_range()?;
    let v = v.clamp(min, max);
    if min == 0 {
        u64::try_from(v).ok().map(Datum::UInt)
    } else {
        i64::try_from(v).ok().map(Datum::Int)
    }
}

fn in_domain(v: i128, ty: SqlType) -> bool {
    ty.integer_range()
        .is_some_and(|(lo, hi)| v >= lo && v <= hi)
}

fn range_datums(
    lo: Option<i128>,
    hi: Option<i128>,
    ty: SqlType,
) -> Option<(Option<Datum>, Option<Datum>)> {
    let (min, max) = ty.integer_range()?;
    if lo.is_some_and(|l| l > max) || hi.is_some_and(|h| h < min) {
        return None;
    }
    Some((
        lo.and_then(|l| to_key_datum(l, ty)),
        hi.and_then(|h| to_key_datum(h, ty)),
    ))
}

/// Chooses the access path for `filter` (already bound and folded) on `table`.
#[must_use]
pub fn choose(table: &Table, filter: Option<&BExpr>) -> Access {
    let Some(filter) = filter else {
        return Access::FullScan;
    };
    if let BExpr::Const(d) = filter {
        return if value::truth(d) == Some(true) {
            Access::FullScan
        } else {
            Access::Empty
        };
    }
    let conjuncts = filter.conjuncts();
    let def = &table.def;
    if let Some(&first) = def.primary_key.first() {
        let ty = table.types.get(first).copied().unwrap_or(SqlType::Text);
        if ty.is_integer() {
            match column_constraint(&conjuncts, first) {
                Some(Constraint::Points(p)) if def.primary_key.len() == 1 => {
                    return Access::PkPoints(
                        p.into_iter()
                            .filter(|v| in_domain(*v, ty))
                            .filter_map(|v| to_key_datum(v, ty))
                            .collect(),
                    );
                }
                Some(Constraint::Points(p)) => {
                    let (lo, hi) = (p.first().copied(), p.last().copied());
                    return match lo
                        .zip(hi)
                        .and_then(|(l, h)| range_datums(Some(l), Some(h), ty))
                    {
                        Some((lo, hi)) => Access::PkRange { lo, hi },
                        None => Access::Empty,
                    };
                }
                Some(Constraint::Range(lo, hi)) => {
                    return match range_datums(lo, hi, ty) {
                        Some((lo, hi)) => Access::PkRange { lo, hi },
                        None => Access::Empty,
                    };
                }
                None => {}
            }
        }
    }
    for (i, ix) in def.indexes.iter().enumerate() {
        let Some(&first) = ix.columns.first() else {
            continue;
        };
        let ty = table.types.get(first).copied().unwrap_or(SqlType::Text);
        if !ty.is_integer() {
            continue;
        }
        let (lo, hi) = match column_constraint(&conjuncts, first) {
            Some(Constraint::Points(p)) => match (p.first().copied(), p.last().copied()) {
                (Some(l), Some(h)) => (Some(l), Some(h)),
                _ => return Access::Empty,
            },
            Some(Constraint::Range(lo, hi)) => (lo, hi),
            None => continue,
        };
        return match range_datums(lo, hi, ty) {
            Some((lo, hi)) => Access::IndexRange { ix: i, lo, hi },
            None => Access::Empty,
        };
    }
    Access::FullScan
}

/// True if `access` (chosen by [`choose`] for `filter`) yields exactly the rows `filter`
/// accepts, so the executor need not evaluate it again: the table's primary key is one integer
/// column and every conjunct compares that column with integer constants (`=`, `<`, `<=`, `>`,
/// `>=`, `BETWEEN`). Those conjuncts are what [`choose`] turned into the key range or points,
/// and a key range on a single-column integer key holds no other rows.
#[must_use]
pub fn filter_is_exact(table: &Table, filter: &BExpr, access: &Access) -> bool {
    if !matches!(access, Access::PkPoints(_) | Access::PkRange { .. }) {
        return false;
    }
    let &[pk] = table.def.primary_key.as_slice() else {
        return false;
    };
    if !table.types.get(pk).is_some_and(|t| t.is_integer()) {
        return false;
    }
    let is_int = |e: &BExpr| matches!(e, BExpr::Const(Datum::Int(_) | Datum::UInt(_)));
    let is_pk = |e: &BExpr| matches!(e, BExpr::Column(c) if *c == pk);
    filter.conjuncts().iter().all(|c| match c {
        BExpr::Cmp(op, a, b) => {
            matches!(
                op,
                CmpOp::Eq | CmpOp::Lt | CmpOp::LtEq | CmpOp::Gt | CmpOp::GtEq
            ) && (is_pk(a) && is_int(b) || is_int(a) && is_pk(b))
        }
        BExpr::Between {
            expr,
            low,
            high,
            negated: false,
        } => is_pk(expr) && is_int(low) && is_int(high),
        _ => false,
    })
}

fn show(d: &Option<Datum>) -> String {
    d.as_ref().map_or("-inf/+inf".into(), value::display)
}

/// One-line description for EXPLAIN.
#[must_use]
pub fn describe(table: &Table, access: &Access) -> String {
    match access {
        Access::Empty => "EMPTY (filter is never true)".into(),
        Access::FullScan => "FULL SCAN".into(),
        Access::PkPoints(p) => format!(
            "PRIMARY point [{}]",
            p.iter().map(value::display).collect::<Vec<_>>().join(", ")
        ),
        Access::PkRange { lo, hi } => format!("PRIMARY range [{}, {}]", show(lo), show(hi)),
        Access::IndexRange { ix, lo, hi } => {
            let name = table.def.indexes.get(*ix).map_or("?", |i| i.name.as_str());
            format!("INDEX {name} range [{}, {}]", show(lo), show(hi))
        }
    }
}

fn bounds(
    prefix: Vec<u8>,
    lo: &Option<Datum>,
    hi: &Option<Datum>,
    ty: SqlType,
) -> SqlResult<(Vec<u8>, Option<Vec<u8>>)> {
    let mut lower = prefix.clone();
    if let Some(l) = lo {
        key::encode(&mut lower, l, ty)?;
    }
    let mut upper = prefix;
    if let Some(h) = hi {
        key::encode(&mut upper, h, ty)?;
    }
    Ok((lower, prefix_upper_bound(&upper)))
}

/// Widest primary-key range read key by key ([`probe_pk_range`]).
const MAX_PROBED_KEYS: i128 = 1024;
/// Keys of a probed range the point cache may miss (each then read from the LSM) before the
/// rest of the range is read by one scan instead.
const MAX_PROBE_MISSES: usize = 16;

/// The keys of a bounded range on a single-column integer primary key: every row in the range
/// has one of them, so reading each (absent ones are skipped) yields exactly the range's rows,
/// in key order.
struct ProbedKeys {
    lo: i128,
    hi: i128,
    unsigned: bool,
}

impl ProbedKeys {
    fn of(def: &crate::catalog::TableDef, lo: Option<&Datum>, hi: Option<&Datum>) -> Option<Self> {
        if def.primary_key.len() != 1 {
            return None;
        }
        let (lo, hi, unsigned) = match (lo?, hi?) {
            (Datum::Int(l), Datum::Int(h)) => (i128::from(*l), i128::from(*h), false),
            (Datum::UInt(l), Datum::UInt(h)) => (i128::from(*l), i128::from(*h), true),
            _ => return None,
        };
        (lo <= hi && hi - lo < MAX_PROBED_KEYS).then_some(Self { lo, hi, unsigned })
    }

    fn datum(&self, v: i128) -> Option<Datum> {
        if self.unsigned {
            u64::try_from(v).ok().map(Datum::UInt)
        } else {
            i64::try_from(v).ok().map(Datum::Int)
        }
    }
}

/// Reads a short primary-key range key by key through the storage point cache, which skips
/// the LSM's merge of sources and its stepping over old versions of each row (a scan's main
/// cost when rows are updated often). A key the cache cannot answer for this transaction's
/// snapshot is read from the LSM; after [`MAX_PROBE_MISSES`] such keys (a cold cache, a sparse
/// range) the rest of the range is scanned. Same rows, same order as [`scan_rows`].
fn probe_pk_range(
    ctx: &StmtCtx<'_>,
    table_id: u32,
    keys: ProbedKeys,
    ty: SqlType,
    upper: Bound<&[u8]>,
    decode: &RowDecoder<'_>,
    f: &mut RowVisitor<'_>,
) -> SqlResult<()> {
    let mut row = Vec::new();
    let mut k = key::row_prefix(table_id);
    let prefix_len = k.len();
    let mut misses = 0;
    for v in keys.lo..=keys.hi {
        let d = keys
            .datum(v)
            .ok_or_else(|| SqlError::Internal("probed key out of its type".into()))?;
        k.truncate(prefix_len);
        key::encode(&mut k, &d, ty)?;
        let found = match ctx.get_cached_with(&k, |v| decode(v, &mut row))? {
            Some(found) => found,
            None if misses < MAX_PROBE_MISSES => {
                misses += 1;
                ctx.get_with(&k, |v| decode(v, &mut row))?
            }
            None => return scan_rows(ctx, Bound::Included(k.as_slice()), upper, decode, f),
        };
        if found.is_some() && !f(&k, &mut row)? {
            break;
        }
    }
    Ok(())
}

/// Scans the rows with keys within the bounds, in key order.
fn scan_rows(
    ctx: &StmtCtx<'_>,
    lower: Bound<&[u8]>,
    upper: Bound<&[u8]>,
    decode: &RowDecoder<'_>,
    f: &mut RowVisitor<'_>,
) -> SqlResult<()> {
    let mut row = Vec::new();
    for item in ctx.scan(lower, upper, Direction::Forward) {
        let (k, v) = item?;
        decode(&v, &mut row)?;
        if !f(&k, &mut row)? {
            break;
        }
    }
    Ok(())
}

/// Fetches the rows of `access`, calling `f(row_key, row)` until it returns `false`.
pub fn fetch(
    ctx: &StmtCtx<'_>,
    table: &Table,
    access: &Access,
    f: &mut dyn FnMut(Vec<u8>, Vec<Datum>) -> SqlResult<bool>,
) -> SqlResult<()> {
    fetch_rows(ctx, table, access, None, &mut |k, row| {
        f(k.to_vec(), std::mem::take(row))
    })
}

/// The row keys of [`Access::PkPoints`] `points` of `table` (distinct, in key order, as the
/// points are).
pub fn point_keys(table: &Table, points: &[Datum]) -> SqlResult<Vec<Vec<u8>>> {
    let def = &table.def;
    let ty = def
        .primary_key
        .first()
        .and_then(|c| table.types.get(*c))
        .copied()
        .unwrap_or(rowio::ROWID_TYPE);
    let prefix = key::row_prefix(def.id);
    points
        .iter()
        .map(|p| {
            let mut k = prefix.clone();
            key::encode(&mut k, p, ty)?;
            Ok(k)
        })
        .collect()
}

/// A row visitor: `f(row_key, row)` returns `false` to stop. `row` is a buffer the fetcher
/// reuses for the next row: the visitor may take values out of it (leaving `Null` in their
/// place) or take the whole row (leaving it empty), but must not otherwise change it.
pub type RowVisitor<'f> = dyn FnMut(&[u8], &mut Vec<Datum>) -> SqlResult<bool> + 'f;

/// Decodes a stored row into the reused row buffer.
type RowDecoder<'d> = dyn Fn(&[u8], &mut Vec<Datum>) -> SqlResult<()> + 'd;

/// Fetches the rows of `access`, calling `f(row_key, row)` until it returns `false`. With
/// `columns` (ascending column indexes), only those columns are decoded and every other column
/// of `row` is `Null`: the caller promises to read no other column.
pub fn fetch_rows(
    ctx: &StmtCtx<'_>,
    table: &Table,
    access: &Access,
    columns: Option<&[usize]>,
    f: &mut RowVisitor<'_>,
) -> SqlResult<()> {
    let def = &table.def;
    let first_ty = |c: Option<&usize>| {
        c.and_then(|c| table.types.get(*c))
            .copied()
            .unwrap_or(rowio::ROWID_TYPE)
    };
    let decode = |bytes: &[u8], row: &mut Vec<Datum>| {
        rowio::decode_row_columns_into(table, bytes, columns, row)
    };
    let mut row = Vec::new();
    match access {
        Access::Empty => Ok(()),
        Access::PkPoints(points) => {
            let ty = first_ty(def.primary_key.first());
            let mut k = key::row_prefix(def.id);
            let prefix_len = k.len();
            for p in points {
                k.truncate(prefix_len);
                key::encode(&mut k, p, ty)?;
                if ctx.get_with(&k, |v| decode(v, &mut row))?.is_some() && !f(&k, &mut row)? {
                    break;
                }
            }
            Ok(())
        }
        Access::FullScan | Access::PkRange { .. } => {
            let (lo, hi) = match access {
                Access::PkRange { lo, hi } => (lo.clone(), hi.clone()),
                _ => (None, None),
            };
            let ty = first_ty(def.primary_key.first());
            let (lower, upper) = bounds(key::row_prefix(def.id), &lo, &hi, ty)?;
            let ub = upper.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
            if let Some(keys) = ProbedKeys::of(def, lo.as_ref(), hi.as_ref()) {
                return probe_pk_range(ctx, def.id, keys, ty, ub, &decode, f);
            }
            scan_rows(ctx, Bound::Included(lower.as_slice()), ub, &decode, f)
        }
        Access::IndexRange { ix, lo, hi } => {
            let ixd = def
                .indexes
                .get(*ix)
                .ok_or_else(|| SqlError::Internal("index vanished".into()))?;
            let (lower, upper) = bounds(
                key::index_prefix(ixd.id),
                lo,
                hi,
                first_ty(ixd.columns.first()),
            )?;
            let ub = upper.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
            for item in ctx.scan(Bound::Included(lower.as_slice()), ub, Direction::Forward) {
                let (k, v) = item?;
                let pk = rowio::pk_from_index_entry(ixd, &table.types, &k, &v)?;
                let rk = rowio::row_key(def.id, &pk);
                ctx.get_with(&rk, |v| decode(v, &mut row))?.ok_or_else(|| {
                    SqlError::Internal(format!("index {} points at a missing row", ixd.name))
                })?;
                if !f(&rk, &mut row)? {
                    break;
                }
            }
            Ok(())
        }
    }
}
