//! ORDER BY and DISTINCT over a SELECT's output rows: where each sort key lives, the sort, and
//! duplicate removal.
//!
//! Invariants: the sort is stable (rows with equal keys keep their order) and compares as
//! [`value::sort_cmp`] does; DISTINCT keeps the first row of each set of rows whose output values
//! are equal as GROUP BY compares them ([`value::group_key`]), in row order. The faster paths
//! below (prefix keys, sort-then-dedup) produce exactly the rows and order of the general ones.

use crate::error::SqlResult;
use crate::expr::BExpr;
use crate::types::Datum;
use crate::value;
use std::cmp::Ordering;

/// An output row and the sort keys kept beside it that are not output values.
pub type KeyedRow = (Vec<Datum>, Vec<Datum>);

/// Where an ORDER BY key of an output row is: one of the row's output values (an ORDER BY
/// expression equal to a select item, e.g. `SELECT c … ORDER BY c`, is not evaluated twice) or
/// one of the extra keys kept beside the row.
#[derive(Debug, Clone, Copy)]
enum SortSlot {
    Item(usize),
    Extra(usize),
}

static NULL_DATUM: Datum = Datum::Null;

impl SortSlot {
    fn pick<'r>(self, vals: &'r [Datum], extra: &'r [Datum]) -> &'r Datum {
        let v = match self {
            Self::Item(i) => vals.get(i),
            Self::Extra(i) => extra.get(i),
        };
        v.unwrap_or(&NULL_DATUM)
    }
}

/// The ORDER BY keys of a query, each as a [`SortSlot`].
pub struct SortKeys {
    slots: Vec<SortSlot>,
    has_extra: bool,
}

impl SortKeys {
    #[must_use]
    pub fn new(items: &[BExpr], order: &[(BExpr, bool)]) -> Self {
        let mut extra = 0;
        let slots: Vec<SortSlot> = order
            .iter()
            .map(|(e, _)| match items.iter().position(|i| i == e) {
                Some(i) => SortSlot::Item(i),
                None => {
                    extra += 1;
                    SortSlot::Extra(extra - 1)
                }
            })
            .collect();
        Self {
            slots,
            has_extra: extra > 0,
        }
    }

    /// The values of the keys that are not output values, for one row (empty, without
    /// allocating, when every key is an output value).
    pub fn extra_keys(
        &self,
        order: &[(BExpr, bool)],
        row: &[Datum],
        aggs: &[Datum],
    ) -> SqlResult<Vec<Datum>> {
        if !self.has_extra {
            return Ok(Vec::new());
        }
        self.slots
            .iter()
            .zip(order)
            .filter(|(s, _)| matches!(s, SortSlot::Extra(_)))
            .map(|(_, (e, _))| e.eval(row, aggs))
            .collect()
    }
}

/// The first 8 bytes of `s` as the case-insensitive collation orders them ([`value::string_cmp`]
/// folds ASCII letters to lower case and compares bytewise, a shorter string first), zero-padded,
/// as a big-endian integer. `prefix_key(a) < prefix_key(b)` implies `a < b`, so only strings
/// with equal prefix keys need the full comparison.
fn prefix_key(s: &[u8]) -> u64 {
    let mut buf = [0u8; 8];
    for (d, b) in buf.iter_mut().zip(s) {
        *d = b.to_ascii_lowercase();
    }
    u64::from_be_bytes(buf)
}

/// The row order for one ORDER BY key whose every value is a string, as (prefix key, row
/// index) pairs: sorted by prefix key alone (an integer sort; descending prefixes for DESC, ties
/// by ascending index), then each run of equal prefixes — rare for varied strings — sorted by
/// the full comparison, ties by index. That is the stable order of the full comparison.
/// `None` when some value is not a string.
fn string_key_order(out: &[KeyedRow], slot: SortSlot, desc: bool) -> Option<Vec<(u64, u32)>> {
    let mut keys: Vec<&[u8]> = Vec::with_capacity(out.len());
    // (prefix key, inverted for DESC) << 32 | index: one integer sort orders by prefix, then index.
    let mut packed: Vec<u128> = Vec::with_capacity(out.len());
    for (i, (v, k)) in out.iter().enumerate() {
        let Datum::Bytes(b) = slot.pick(v, k) else {
            return None;
        };
        let p = prefix_key(b);
        let p = if desc { !p } else { p };
        packed.push(u128::from(p) << 32 | u128::from(u32::try_from(i).ok()?));
        keys.push(b);
    }
    packed.sort_unstable();
    let mut entries: Vec<(u64, u32)> = packed
        .into_iter()
        .map(|e| {
            let p = (e >> 32) as u64;
            ((if desc { !p } else { p }), e as u32)
        })
        .collect();
    let full = |i: u32| keys.get(i as usize).copied().unwrap_or_default();
    let mut start = 0;
    while start < entries.len() {
        let prefix = entries.get(start).map(|e| e.0);
        let len = entries
            .get(start..)
            .unwrap_or_default()
            .iter()
            .take_while(|e| Some(e.0) == prefix)
            .count();
        if len > 1
            && let Some(run) = entries.get_mut(start..start + len)
        {
            run.sort_unstable_by(|&(_, a), &(_, b)| {
                let o = value::string_cmp(full(a), full(b));
                let o = if desc { o.reverse() } else { o };
                o.then(a.cmp(&b))
            });
        }
        start += len.max(1);
    }
    Some(entries)
}

/// `rows` rearranged into `order` (a permutation of their indexes).
fn permute(rows: Vec<KeyedRow>, order: &[(u64, u32)]) -> Vec<KeyedRow> {
    let mut rows: Vec<Option<KeyedRow>> = rows.into_iter().map(Some).collect();
    order
        .iter()
        .filter_map(|&(_, i)| rows.get_mut(i as usize).and_then(Option::take))
        .collect()
}

/// Sorts output rows by the ORDER BY keys (stable: equal rows keep their order).
pub fn sort_rows(out: &mut Vec<KeyedRow>, sort: &SortKeys, order: &[(BExpr, bool)]) {
    if let ([slot], [(_, desc)]) = (sort.slots.as_slice(), order)
        && let Some(idx) = string_key_order(out, *slot, *desc)
    {
        *out = permute(std::mem::take(out), &idx);
        return;
    }
    out.sort_by(|(va, ka), (vb, kb)| {
        for (slot, (_, desc)) in sort.slots.iter().zip(order) {
            let o = value::sort_cmp(slot.pick(va, ka), slot.pick(vb, kb));
            if o != Ordering::Equal {
                return if *desc { o.reverse() } else { o };
            }
        }
        Ordering::Equal
    });
}

/// DISTINCT then ORDER BY. When the output is one string value that is also the only sort key
/// (`SELECT DISTINCT c … ORDER BY c`), the rows are sorted first and equal neighbours dropped:
/// strings equal under the collation are exactly those [`value::group_key`] makes equal, and
/// the stable sort keeps the first of each such set first, so the result is that of
/// [`distinct_rows`] followed by [`sort_rows`].
pub fn distinct_sorted(
    out: Vec<KeyedRow>,
    sort: &SortKeys,
    order: &[(BExpr, bool)],
) -> Vec<KeyedRow> {
    if let ([slot @ SortSlot::Item(0)], [(_, desc)]) = (sort.slots.as_slice(), order)
        && out.iter().all(|(v, k)| v.len() == 1 && k.is_empty())
        && let Some(idx) = string_key_order(&out, *slot, *desc)
    {
        let mut kept: Vec<KeyedRow> = Vec::with_capacity(out.len());
        let mut last_prefix = None;
        for (row, &(prefix, _)) in permute(out, &idx).into_iter().zip(&idx) {
            // Strings with different prefix keys differ; equal ones need the full comparison.
            let same = last_prefix == Some(prefix)
                && match (kept.last().and_then(|(v, _)| v.first()), row.0.first()) {
                    (Some(Datum::Bytes(a)), Some(Datum::Bytes(b))) => {
                        value::string_cmp(a, b).is_eq()
                    }
                    _ => false,
                };
            last_prefix = Some(prefix);
            if !same {
                kept.push(row);
            }
        }
        return kept;
    }
    let mut out = distinct_rows(out);
    sort_rows(&mut out, sort, order);
    out
}

/// The first of each set of rows whose output values are equal as GROUP BY compares them
/// ([`value::group_key`]), in their order. Rows are told apart by a hash of their key; the keys
/// themselves are compared only when hashes meet, so no key is kept per row.
pub fn distinct_rows(rows: Vec<KeyedRow>) -> Vec<KeyedRow> {
    use std::hash::BuildHasher;
    let key_of = |vals: &[Datum], key: &mut Vec<u8>| {
        key.clear();
        vals.iter().for_each(|d| value::group_key(d, key));
    };
    let hasher = foldhash::fast::RandomState::default();
    // hash -> index in `kept` of the first row with that hash; later rows with the same hash
    // and a different key go to `more`.
    let mut first: std::collections::HashMap<u64, usize, foldhash::fast::RandomState> =
        std::collections::HashMap::with_capacity_and_hasher(rows.len(), Default::default());
    let mut more: Vec<(u64, usize)> = Vec::new();
    let mut kept: Vec<KeyedRow> = Vec::with_capacity(rows.len());
    let (mut key, mut other) = (Vec::new(), Vec::new());
    for row in rows {
        key_of(&row.0, &mut key);
        let h = hasher.hash_one(key.as_slice());
        let candidates = first
            .get(&h)
            .copied()
            .into_iter()
            .chain(more.iter().filter(|(mh, _)| *mh == h).map(|(_, i)| *i));
        let mut duplicate = false;
        for i in candidates {
            if let Some((vals, _)) = kept.get(i) {
                key_of(vals, &mut other);
                if other == key {
                    duplicate = true;
                    break;
                }
            }
        }
        if duplicate {
            continue;
        }
        match first.entry(h) {
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(kept.len());
            }
            std::collections::hash_map::Entry::Occupied(_) => more.push((h, kept.len())),
        }
        kept.push(row);
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rows(vals: &[Datum]) -> Vec<KeyedRow> {
        vals.iter().map(|v| (vec![v.clone()], Vec::new())).collect()
    }

    /// The general path: sort_cmp over every key, std's stable sort.
    fn reference_sort(mut out: Vec<KeyedRow>, desc: bool) -> Vec<KeyedRow> {
        out.sort_by(|(a, _), (b, _)| {
            let o = value::sort_cmp(&a[0], &b[0]);
            if desc { o.reverse() } else { o }
        });
        out
    }

    fn text() -> impl Strategy<Value = Datum> {
        // Short strings over a small alphabet with case and NUL, so prefixes, case-folded
        // equality and padding collide often.
        proptest::collection::vec(
            prop_oneof![Just(b'a'), Just(b'A'), Just(b'b'), Just(0u8), Just(b'-')],
            0..12,
        )
        .prop_map(Datum::Bytes)
    }

    proptest! {
        #[test]
        fn string_sort_matches_the_general_sort(vals in proptest::collection::vec(text(), 0..40), desc: bool) {
            let items = [BExpr::Column(0)];
            let order = [(BExpr::Column(0), desc)];
            let sort = SortKeys::new(&items, &order);
            let mut fast = rows(&vals);
            sort_rows(&mut fast, &sort, &order);
            prop_assert_eq!(fast, reference_sort(rows(&vals), desc));
        }

        #[test]
        fn sorted_distinct_matches_distinct_then_sort(vals in proptest::collection::vec(text(), 0..40), desc: bool) {
            let items = [BExpr::Column(0)];
            let order = [(BExpr::Column(0), desc)];
            let sort = SortKeys::new(&items, &order);
            let fast = distinct_sorted(rows(&vals), &sort, &order);
            let slow = reference_sort(distinct_rows(rows(&vals)), desc);
            prop_assert_eq!(fast, slow);
        }
    }

    #[test]
    fn mixed_types_take_the_general_path() {
        let vals = [
            Datum::Bytes(b"b".to_vec()),
            Datum::Null,
            Datum::Int(3),
            Datum::Bytes(b"A".to_vec()),
        ];
        let items = [BExpr::Column(0)];
        let order = [(BExpr::Column(0), false)];
        let sort = SortKeys::new(&items, &order);
        let mut out = rows(&vals);
        sort_rows(&mut out, &sort, &order);
        assert_eq!(out, reference_sort(rows(&vals), false));
        assert_eq!(out[0].0[0], Datum::Null);
    }
}
