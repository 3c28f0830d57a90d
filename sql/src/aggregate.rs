//! Aggregation: grouping rows by GROUP BY values (compared as the collation compares, so 'a'
//! and 'A' are one group) and the aggregate states COUNT / SUM / AVG / MIN / MAX, with DISTINCT.
//!
//! Result typing follows MySQL: SUM over exact values is DECIMAL (an integer SUM is a scale-0
//! DECIMAL), AVG over exact values is DECIMAL with 4 more digits of scale, over anything else
//! DOUBLE; COUNT is BIGINT; NULL inputs are skipped; SUM/AVG/MIN/MAX of no rows is NULL.

use crate::bind::{AggFunc, AggSpec};
use crate::error::SqlResult;
use crate::expr::BExpr;
use crate::types::Datum;
use crate::value::{self, ArithOp};
use std::collections::{HashMap, HashSet};

/// The running state of one aggregate in one group.
#[derive(Debug, Clone)]
pub struct AggState {
    func: AggFunc,
    count: i64,
    acc: Datum,
    seen: Option<HashSet<Vec<u8>>>,
}

impl AggState {
    fn new(spec: &AggSpec) -> Self {
        Self {
            func: spec.func,
            count: 0,
            acc: Datum::Null,
            seen: spec.distinct.then(HashSet::new),
        }
    }

    fn add(&mut self, v: Datum) -> SqlResult<()> {
        if self.func == AggFunc::CountStar {
            self.count += 1;
            return Ok(());
        }
        if v.is_null() {
            return Ok(());
        }
        if let Some(seen) = &mut self.seen {
            let mut k = Vec::new();
            value::group_key(&v, &mut k);
            if !seen.insert(k) {
                return Ok(());
            }
        }
        self.count += 1;
        let v = match v {
            Datum::Bytes(_) if matches!(self.func, AggFunc::Sum | AggFunc::Avg) => {
                Datum::Double(value::to_f64(&v).unwrap_or(0.0))
            }
            other => other,
        };
        self.acc = match self.func {
            AggFunc::CountStar | AggFunc::Count => Datum::Null,
            AggFunc::Sum | AggFunc::Avg => {
                if self.acc.is_null() {
                    v
                } else {
                    value::arith(ArithOp::Add, &self.acc, &v)?
                }
            }
            AggFunc::Min => {
                if self.acc.is_null() || value::sort_cmp(&v, &self.acc).is_lt() {
                    v
                } else {
                    std::mem::replace(&mut self.acc, Datum::Null)
                }
            }
            AggFunc::Max => {
                if self.acc.is_null() || value::sort_cmp(&v, &self.acc).is_gt() {
                    v
                } else {
                    std::mem::replace(&mut self.acc, Datum::Null)
                }
            }
        };
        Ok(())
    }

    /// The aggregate's value.
    pub fn result(self) -> SqlResult<Datum> {
        Ok(match self.func {
            AggFunc::CountStar | AggFunc::Count => Datum::Int(self.count),
            AggFunc::Sum => match self.acc {
                Datum::Int(v) => Datum::Decimal {
                    unscaled: i128::from(v),
                    scale: 0,
                },
                Datum::UInt(v) => Datum::Decimal {
                    unscaled: i128::from(v),
                    scale: 0,
                },
                other => other,
            },
            AggFunc::Avg => {
                if self.count == 0 {
                    Datum::Null
                } else {
                    value::arith(ArithOp::Div, &self.acc, &Datum::Int(self.count))?
                }
            }
            AggFunc::Min | AggFunc::Max => self.acc,
        })
    }
}

/// Groups in first-seen order: representative row (for column references) and states.
pub struct Groups {
    index: HashMap<Vec<u8>, usize>,
    groups: Vec<(Vec<Datum>, Vec<AggState>)>,
    template: Vec<AggState>,
}

impl Groups {
    /// Empty grouping for the given aggregates.
    #[must_use]
    pub fn new(aggs: &[AggSpec]) -> Self {
        Self {
            index: HashMap::new(),
            groups: Vec::new(),
            template: aggs.iter().map(AggState::new).collect(),
        }
    }

    /// Adds a (filtered) row. The row is taken out of `row` (leaving it empty) only when it
    /// becomes a group's representative.
    pub fn add(
        &mut self,
        group_by: &[BExpr],
        aggs: &[AggSpec],
        row: &mut Vec<Datum>,
    ) -> SqlResult<()> {
        let arg = |a: &AggSpec, row: &[Datum]| {
            a.arg.as_ref().map_or(Ok(Datum::Null), |e| e.eval(row, &[]))
        };
        if group_by.is_empty() {
            // One group: no key to build or look up; its representative row is the first.
            let first = self.groups.is_empty();
            if first {
                self.groups.push((Vec::new(), self.template.clone()));
            }
            if let Some((rep, states)) = self.groups.first_mut() {
                for (s, a) in states.iter_mut().zip(aggs) {
                    s.add(arg(a, row)?)?;
                }
                if first {
                    *rep = std::mem::take(row);
                }
            }
            return Ok(());
        }
        let mut key = Vec::new();
        for g in group_by {
            value::group_key(&g.eval(row, &[])?, &mut key);
        }
        let args = aggs
            .iter()
            .map(|a| arg(a, row))
            .collect::<SqlResult<Vec<_>>>()?;
        let slot = match self.index.get(&key) {
            Some(&i) => i,
            None => {
                self.groups
                    .push((std::mem::take(row), self.template.clone()));
                let i = self.groups.len() - 1;
                self.index.insert(key, i);
                i
            }
        };
        if let Some((_, states)) = self.groups.get_mut(slot) {
            for (s, v) in states.iter_mut().zip(args) {
                s.add(v)?;
            }
        }
        Ok(())
    }

    /// The groups; without GROUP BY an empty input still yields one group (of NULL columns).
    #[must_use]
    pub fn finish(
        self,
        implicit_single_group: bool,
        width: usize,
    ) -> Vec<(Vec<Datum>, Vec<AggState>)> {
        if self.groups.is_empty() && implicit_single_group {
            return vec![(vec![Datum::Null; width], self.template)];
        }
        self.groups
    }
}
