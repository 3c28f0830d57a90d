//! Splitting one table scan into several key ranges, so DataFusion reads and processes a large
//! table on several cores (one partition per range).
//!
//! The split points interpolate the table's first and last stored keys: both keys are cut at
//! their common prefix, the next 8 bytes of each (zero-padded) are read as big-endian integers
//! `a < b`, and the split keys are `common prefix · (a + (b - a) · i / n)`. Memcomparable keys
//! keep their order under this reading, so for integer primary keys (8 big-endian bytes) the
//! ranges hold about equally many key values.
//!
//! Row estimates (for the optimizer's join order, never for answers) use the same reading: a
//! partition's first [`SAMPLE_KEYS`] keys give a key density, scaled to the partition's span.
//!
//! Invariants: the returned ranges are contiguous, disjoint and ascending, and together they
//! cover exactly the input range, whatever keys the table holds (rows written after the first
//! and last keys were read land in the first or last range); every split key lies strictly
//! inside (first key, last key], so no range is empty by construction.

use super::scan::KeyRange;

/// Splits `range` (whose stored keys run from `first` to `last`, inclusive) into at most `n`
/// ranges; one (no split) when `first == last`.
#[must_use]
pub fn split(range: &KeyRange, first: &[u8], last: &[u8], n: usize) -> Vec<KeyRange> {
    let common = common_prefix(first, last);
    let a = window(first, common);
    let b = window(last, common);
    let span = u128::from(b.saturating_sub(a));
    let parts = u128::try_from(n).unwrap_or(1).min(span).max(1);
    let mut ranges = Vec::with_capacity(n.max(1));
    let mut lower = range.lower.clone();
    for i in 1..parts {
        let point = u128::from(a) + span * i / parts;
        let Ok(point) = u64::try_from(point) else {
            break;
        };
        let mut key = first.get(..common).unwrap_or_default().to_vec();
        key.extend_from_slice(&point.to_be_bytes());
        // Keep the ranges inside the input (a split key outside it makes an empty range).
        if key <= lower || range.upper.as_ref().is_some_and(|u| key >= *u) {
            continue;
        }
        ranges.push(range.with_bounds(lower, Some(key.clone())));
        lower = key;
    }
    ranges.push(range.with_bounds(lower, range.upper.clone()));
    ranges
}

/// Keys sampled at the start of each partition to estimate its rows.
pub const SAMPLE_KEYS: usize = 1024;

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Estimated rows of `part` of a range whose stored keys run from `first` to `last`, from
/// `sample`, the part's first keys (at most [`SAMPLE_KEYS`]): exact when the sample holds the
/// whole part, else the sample's density over the part's key span; `None` when the sample's
/// keys are too close to measure.
#[must_use]
pub fn estimate_rows(
    part: &KeyRange,
    first: &[u8],
    last: &[u8],
    sample: &[Vec<u8>],
) -> Option<usize> {
    if sample.len() < SAMPLE_KEYS {
        return Some(sample.len());
    }
    let common = common_prefix(first, last);
    // Every key between `first` and `last` shares their common prefix.
    let lo = window(part.lower.as_slice().max(first), common);
    let hi = match &part.upper {
        Some(u) if u.as_slice() <= last => window(u, common),
        _ => window(last, common).saturating_add(1),
    };
    let (s0, s1) = (sample.first()?, sample.last()?);
    let sampled = window(s1, common).checked_sub(window(s0, common))?;
    if sampled == 0 {
        return None;
    }
    let density = (sample.len() - 1) as f64 / sampled as f64;
    Some((density * hi.saturating_sub(lo) as f64).round() as usize).map(|r| r.max(sample.len()))
}

/// The 8 bytes of `key` after `at`, zero-padded, as a big-endian integer.
fn window(key: &[u8], at: usize) -> u64 {
    let mut bytes = [0u8; 8];
    for (dst, src) in bytes.iter_mut().zip(key.iter().skip(at)) {
        *dst = *src;
    }
    u64::from_be_bytes(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::key;
    use crate::types::{Datum, SqlType};

    fn int_key(table: u32, v: i64) -> Vec<u8> {
        let mut k = key::row_prefix(table);
        key::encode(&mut k, &Datum::Int(v), SqlType::BigInt { unsigned: false }).unwrap();
        k
    }

    /// Which of `ranges` holds `k` (exactly one must).
    fn owner(ranges: &[KeyRange], k: &[u8]) -> usize {
        let owners: Vec<usize> = ranges
            .iter()
            .enumerate()
            .filter(|(_, r)| r.contains(k))
            .map(|(i, _)| i)
            .collect();
        assert_eq!(owners.len(), 1, "key {k:?} in ranges {owners:?}");
        owners[0]
    }

    #[test]
    fn integer_keys_split_evenly_and_every_key_has_one_range() {
        let full = KeyRange::table(7);
        let ranges = split(&full, &int_key(7, 1), &int_key(7, 6_000_000), 4);
        assert_eq!(ranges.len(), 4);
        let mut counts = [0usize; 4];
        for v in (-10..6_000_010).step_by(997) {
            counts[owner(&ranges, &int_key(7, v))] += 1;
        }
        for c in counts {
            assert!((1400..=1610).contains(&c), "{counts:?}");
        }
        // Keys before the first and after the last stored key stay covered.
        assert_eq!(owner(&ranges, &int_key(7, i64::MIN)), 0);
        assert_eq!(owner(&ranges, &int_key(7, i64::MAX)), 3);
        assert!(!ranges.iter().any(|r| r.contains(&int_key(8, 5))));
    }

    #[test]
    fn one_stored_key_or_one_partition_means_no_split() {
        let full = KeyRange::table(7);
        assert_eq!(
            split(&full, &int_key(7, 5), &int_key(7, 5), 4),
            vec![full.clone()]
        );
        assert_eq!(
            split(&full, &int_key(7, 1), &int_key(7, 1000), 1),
            vec![full.clone()]
        );
        // Keys one apart still split (the byte strings between them are keys too).
        let ranges = split(&full, &int_key(7, 5), &int_key(7, 6), 4);
        assert_eq!(ranges.len(), 4);
        assert_eq!(owner(&ranges, &int_key(7, 5)), 0);
        assert_eq!(owner(&ranges, &int_key(7, 6)), 3);
    }

    #[test]
    fn a_bounded_range_is_split_inside_its_bounds() {
        let mut bounded = KeyRange::table(7);
        bounded.lower = int_key(7, 100);
        bounded.upper = Some(int_key(7, 200));
        let ranges = split(&bounded, &int_key(7, 100), &int_key(7, 199), 2);
        assert_eq!(ranges.len(), 2);
        assert_eq!(ranges[0].lower, int_key(7, 100));
        assert_eq!(ranges[1].upper, Some(int_key(7, 200)));
        for v in 100..200 {
            owner(&ranges, &int_key(7, v));
        }
        assert!(!ranges.iter().any(|r| r.contains(&int_key(7, 200))));
        assert!(!ranges.iter().any(|r| r.contains(&int_key(7, 99))));
    }

    #[test]
    fn row_estimates_follow_the_key_density() {
        let full = KeyRange::table(7);
        // Every 4th integer is a key: 1, 5, 9, … up to 400_001 (100_001 keys).
        let (first, last) = (int_key(7, 1), int_key(7, 400_001));
        let parts = split(&full, &first, &last, 2);
        let mut total = 0;
        for part in &parts {
            let start = (1..)
                .step_by(4)
                .find(|v| part.contains(&int_key(7, *v)))
                .unwrap();
            let sample: Vec<Vec<u8>> = (start..)
                .step_by(4)
                .take(SAMPLE_KEYS)
                .map(|v| int_key(7, v))
                .collect();
            total += estimate_rows(part, &first, &last, &sample).unwrap();
        }
        assert!((95_000..=105_000).contains(&total), "{total}");
        // A sample smaller than SAMPLE_KEYS is the whole part: exact.
        let few = vec![int_key(7, 1), int_key(7, 2)];
        assert_eq!(estimate_rows(&full, &few[0], &few[1], &few), Some(2));
    }

    #[test]
    fn string_keys_split_in_order() {
        let k = |s: &str| {
            let mut k = key::row_prefix(3);
            key::encode(&mut k, &Datum::Bytes(s.into()), SqlType::Text).unwrap();
            k
        };
        let full = KeyRange::table(3);
        let ranges = split(&full, &k("apple"), &k("zebra"), 3);
        assert_eq!(ranges.len(), 3);
        let mut last = 0;
        for w in ["apple", "banana", "kiwi", "mango", "tomato", "zebra"] {
            let o = owner(&ranges, &k(w));
            assert!(o >= last);
            last = o;
        }
        assert_eq!(last, 2);
    }
}
