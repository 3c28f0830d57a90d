// Copyright (c) 2024-present, fjall-rs
// This source code is licensed under both the Apache 2.0 and MIT License
// (found in the LICENSE-* files in the repository)

// The upstream memtable tests, then the Orcinus patch tests (chains against a model of the
// upstream skiplist, pruning, batches), split out of `mod.rs` by Orcinus.

use super::*;
use crate::ValueType;
use test_log::test;

#[test]
#[expect(clippy::unwrap_used)]
fn memtable_mvcc_point_read() {
    let memtable = Memtable::new(0);

    memtable.insert(InternalValue::from_components(
        *b"hello-key-999991",
        *b"hello-value-999991",
        0,
        ValueType::Value,
    ));

    let item = memtable.get(b"hello-key-99999", SeqNo::MAX);
    assert_eq!(None, item);

    let item = memtable.get(b"hello-key-999991", SeqNo::MAX);
    assert_eq!(*b"hello-value-999991", &*item.unwrap().value);

    memtable.insert(InternalValue::from_components(
        *b"hello-key-999991",
        *b"hello-value-999991-2",
        1,
        ValueType::Value,
    ));

    let item = memtable.get(b"hello-key-99999", SeqNo::MAX);
    assert_eq!(None, item);

    let item = memtable.get(b"hello-key-999991", SeqNo::MAX);
    assert_eq!((*b"hello-value-999991-2"), &*item.unwrap().value);

    let item = memtable.get(b"hello-key-99999", 1);
    assert_eq!(None, item);

    let item = memtable.get(b"hello-key-999991", 1);
    assert_eq!((*b"hello-value-999991"), &*item.unwrap().value);

    let item = memtable.get(b"hello-key-99999", 2);
    assert_eq!(None, item);

    let item = memtable.get(b"hello-key-999991", 2);
    assert_eq!((*b"hello-value-999991-2"), &*item.unwrap().value);
}

#[test]
fn memtable_get() {
    let memtable = Memtable::new(0);

    let value =
        InternalValue::from_components(b"abc".to_vec(), b"abc".to_vec(), 0, ValueType::Value);

    memtable.insert(value.clone());

    assert_eq!(Some(value), memtable.get(b"abc", SeqNo::MAX));
}

#[test]
fn memtable_get_highest_seqno() {
    let memtable = Memtable::new(0);

    memtable.insert(InternalValue::from_components(
        b"abc".to_vec(),
        b"abc".to_vec(),
        0,
        ValueType::Value,
    ));
    memtable.insert(InternalValue::from_components(
        b"abc".to_vec(),
        b"abc".to_vec(),
        1,
        ValueType::Value,
    ));
    memtable.insert(InternalValue::from_components(
        b"abc".to_vec(),
        b"abc".to_vec(),
        2,
        ValueType::Value,
    ));
    memtable.insert(InternalValue::from_components(
        b"abc".to_vec(),
        b"abc".to_vec(),
        3,
        ValueType::Value,
    ));
    memtable.insert(InternalValue::from_components(
        b"abc".to_vec(),
        b"abc".to_vec(),
        4,
        ValueType::Value,
    ));

    assert_eq!(
        Some(InternalValue::from_components(
            b"abc".to_vec(),
            b"abc".to_vec(),
            4,
            ValueType::Value,
        )),
        memtable.get(b"abc", SeqNo::MAX)
    );
}

#[test]
fn memtable_get_prefix() {
    let memtable = Memtable::new(0);

    memtable.insert(InternalValue::from_components(
        b"abc0".to_vec(),
        b"abc".to_vec(),
        0,
        ValueType::Value,
    ));
    memtable.insert(InternalValue::from_components(
        b"abc".to_vec(),
        b"abc".to_vec(),
        255,
        ValueType::Value,
    ));

    assert_eq!(
        Some(InternalValue::from_components(
            b"abc".to_vec(),
            b"abc".to_vec(),
            255,
            ValueType::Value,
        )),
        memtable.get(b"abc", SeqNo::MAX)
    );

    assert_eq!(
        Some(InternalValue::from_components(
            b"abc0".to_vec(),
            b"abc".to_vec(),
            0,
            ValueType::Value,
        )),
        memtable.get(b"abc0", SeqNo::MAX)
    );
}

#[test]
fn memtable_get_old_version() {
    let memtable = Memtable::new(0);

    memtable.insert(InternalValue::from_components(
        b"abc".to_vec(),
        b"abc".to_vec(),
        0,
        ValueType::Value,
    ));
    memtable.insert(InternalValue::from_components(
        b"abc".to_vec(),
        b"abc".to_vec(),
        99,
        ValueType::Value,
    ));
    memtable.insert(InternalValue::from_components(
        b"abc".to_vec(),
        b"abc".to_vec(),
        255,
        ValueType::Value,
    ));

    assert_eq!(
        Some(InternalValue::from_components(
            b"abc".to_vec(),
            b"abc".to_vec(),
            255,
            ValueType::Value,
        )),
        memtable.get(b"abc", SeqNo::MAX)
    );

    assert_eq!(
        Some(InternalValue::from_components(
            b"abc".to_vec(),
            b"abc".to_vec(),
            99,
            ValueType::Value,
        )),
        memtable.get(b"abc", 100)
    );

    assert_eq!(
        Some(InternalValue::from_components(
            b"abc".to_vec(),
            b"abc".to_vec(),
            0,
            ValueType::Value,
        )),
        memtable.get(b"abc", 50)
    );
}

// Orcinus patch tests: the chain layout against a model of the upstream skiplist.

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % bound
    }
}

fn random_key(rng: &mut Rng) -> InternalKey {
    let user_key = vec![b'k', b'0' + rng.next(6) as u8];
    InternalKey::new(user_key, rng.next(40), ValueType::Value)
}

fn random_bound(rng: &mut Rng) -> Bound<InternalKey> {
    match rng.next(3) {
        0 => Bound::Unbounded,
        1 => Bound::Included(random_key(rng)),
        _ => Bound::Excluded(random_key(rng)),
    }
}

#[test]
fn chains_iterate_like_a_skiplist_of_versions() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _round in 0..200 {
        let memtable = Memtable::new(0);
        let mut model = std::collections::BTreeMap::new();
        for _ in 0..rng.next(60) {
            let key = random_key(&mut rng);
            let value_type = if rng.next(4) == 0 {
                ValueType::Tombstone
            } else {
                ValueType::Value
            };
            let value = rng.next(1000).to_string().into_bytes();
            let item =
                InternalValue::from_components(key.user_key.clone(), value, key.seqno, value_type);
            memtable.insert(item.clone());
            // The upstream skiplist replaced an entry with an equal (key, seqno).
            model.insert(item.key.clone(), item);
        }
        assert_eq!(model.len(), memtable.len());
        let all: Vec<_> = model.values().cloned().collect();
        assert_eq!(all, memtable.iter().collect::<Vec<_>>());
        assert_eq!(
            all.iter().rev().cloned().collect::<Vec<_>>(),
            memtable.iter().rev().collect::<Vec<_>>()
        );

        for _ in 0..20 {
            let bounds = (random_bound(&mut rng), random_bound(&mut rng));
            let inverted = match (&bounds.0, &bounds.1) {
                (
                    Bound::Included(a) | Bound::Excluded(a),
                    Bound::Included(b) | Bound::Excluded(b),
                ) => a > b,
                _ => false,
            };
            if inverted {
                continue; // BTreeMap::range panics on those
            }
            let expected: Vec<_> = model
                .range(bounds.clone())
                .map(|(_, v)| v.clone())
                .collect();
            // Alternate ends at random, as a double-ended consumer may.
            let mut iter = memtable.range(bounds.clone());
            let (mut front, mut back) = (Vec::new(), Vec::new());
            loop {
                let item = if rng.next(2) == 0 {
                    iter.next().map(|v| front.push(v))
                } else {
                    iter.next_back().map(|v| back.push(v))
                };
                if item.is_none() {
                    break;
                }
            }
            back.reverse();
            front.extend(back);
            assert_eq!(expected, front, "range {bounds:?}");
        }

        for user_key in [b"k0", b"k1", b"k2", b"k3", b"k4", b"k5"] {
            for seqno in 0..42 {
                let expected = model
                    .range(
                        InternalKey::new(user_key.to_vec(), seqno.max(1) - 1, ValueType::Value)..,
                    )
                    .map(|(_, v)| v)
                    .find(|v| &*v.key.user_key == user_key)
                    .filter(|_| seqno > 0)
                    .cloned();
                assert_eq!(
                    expected,
                    memtable.get(user_key, seqno),
                    "get {user_key:?}@{seqno}"
                );
            }
        }
    }
}

fn value(key: &[u8], seqno: SeqNo, value_type: ValueType) -> InternalValue {
    InternalValue::from_components(
        key.to_vec(),
        seqno.to_string().into_bytes(),
        seqno,
        value_type,
    )
}

#[test]
fn pruning_unlinks_versions_no_reader_sees() {
    let memtable = Memtable::new(0);
    for seqno in 1..=5 {
        memtable.insert(value(b"a", seqno, ValueType::Value));
    }
    memtable.insert(value(b"b", 1, ValueType::Value));
    let size_before = memtable.size();
    assert_eq!(6, memtable.len());

    // Readers read above 3: they all see version 3 or newer, so 1 and 2 go; 6 is new.
    let item = value(b"a", 6, ValueType::Value);
    let item_size = entry_size(&item.key.user_key, &item.value);
    let (size, size_after, freed) = memtable.insert_pruning(item, Some(3));
    assert_eq!(item_size, size);
    assert_eq!(
        freed,
        entry_size(b"a", b"1") + entry_size(b"a", b"2"),
        "versions 1 and 2"
    );
    assert_eq!(size_before + item_size - freed, size_after);
    assert_eq!(size_after, memtable.size());
    assert_eq!(5, memtable.len());
    let seqnos: Vec<_> = memtable
        .iter()
        .map(|v| (v.key.user_key.to_vec(), v.key.seqno))
        .collect();
    assert_eq!(
        vec![
            (b"a".to_vec(), 6),
            (b"a".to_vec(), 5),
            (b"a".to_vec(), 4),
            (b"a".to_vec(), 3),
            (b"b".to_vec(), 1)
        ],
        seqnos
    );
    // A reader at 4 (sees seqnos below 4) still finds its version.
    assert_eq!(Some(3), memtable.get(b"a", 4).map(|v| v.key.seqno));

    // A watermark below every version prunes nothing.
    let (_, _, freed) = memtable.insert_pruning(value(b"b", 2, ValueType::Value), Some(0));
    assert_eq!(0, freed);
    assert_eq!(6, memtable.len());

    // A tombstone prunes too, and stays itself.
    let (_, _, freed) = memtable.insert_pruning(value(b"a", 7, ValueType::Tombstone), Some(6));
    assert_eq!(
        entry_size(b"a", b"5") + entry_size(b"a", b"4") + entry_size(b"a", b"3"),
        freed
    );
    assert_eq!(
        vec![(7, ValueType::Tombstone), (6, ValueType::Value)],
        memtable
            .range(
                InternalKey::new(b"a".to_vec(), SeqNo::MAX, ValueType::Value)
                    ..=InternalKey::new(b"a".to_vec(), 0, ValueType::Value)
            )
            .map(|v| (v.key.seqno, v.key.value_type))
            .collect::<Vec<_>>()
    );
    assert_eq!(4, memtable.len());
}

#[test]
fn prune_all_unlinks_in_every_chain_what_a_write_would() {
    let memtable = Memtable::new(0);
    for seqno in 1..=4 {
        memtable.insert(value(b"a", seqno, ValueType::Value));
    }
    memtable.insert(value(b"b", 2, ValueType::Value));
    memtable.insert(value(b"b", 5, ValueType::Tombstone));
    memtable.insert(value(b"c", 1, ValueType::Value));
    memtable.insert(value(b"d", 1, ValueType::Value));
    memtable.insert(value(b"d", 2, ValueType::WeakTombstone));
    memtable.insert(value(b"d", 3, ValueType::Value));
    assert_eq!(4, memtable.key_count());
    assert_eq!(10, memtable.len());
    let size_before = memtable.size();

    // Readers read above 2: every reader sees version 2 or newer of each key. d's newest
    // version at 2 is a weak tombstone: it must meet the value it cancels, so d keeps d@1.
    let freed = memtable.prune_all(2);
    assert_eq!(entry_size(b"a", b"1"), freed, "only a@1");
    assert_eq!(size_before - freed, memtable.size());
    assert_eq!(9, memtable.len());
    assert_eq!(4, memtable.key_count(), "keys stay");

    // Readers read above 5.
    let freed = memtable.prune_all(5);
    assert_eq!(
        entry_size(b"a", b"2")
            + entry_size(b"a", b"3")
            + entry_size(b"b", b"2")
            + entry_size(b"d", b"2")
            + entry_size(b"d", b"1"),
        freed,
        "all but the newest version of each key (b's being its tombstone)"
    );
    let left: Vec<_> = memtable
        .iter()
        .map(|v| (v.key.user_key.to_vec(), v.key.seqno))
        .collect();
    assert_eq!(
        vec![
            (b"a".to_vec(), 4),
            (b"b".to_vec(), 5),
            (b"c".to_vec(), 1),
            (b"d".to_vec(), 3),
        ],
        left
    );
    assert_eq!(4, memtable.len());
    assert_eq!(Some(4), memtable.get(b"a", 6).map(|v| v.key.seqno));
    assert_eq!(0, memtable.prune_all(5), "nothing left to unlink");
}

#[test]
fn a_batch_inserts_as_its_items_one_by_one_would() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for _round in 0..200 {
        let batched = Memtable::new(0);
        let single = Memtable::new(0);
        let mut seqno = 1;
        for _ in 0..rng.next(12) {
            // A batch shares one seqno; its keys may repeat (the later item replaces).
            let items: Vec<_> = (0..rng.next(8))
                .map(|_| {
                    let value_type = match rng.next(8) {
                        0 => ValueType::Tombstone,
                        1 => ValueType::WeakTombstone,
                        _ => ValueType::Value,
                    };
                    let key = [b'k', b'0' + rng.next(5) as u8];
                    InternalValue::from_components(
                        key.to_vec(),
                        rng.next(1000).to_string().into_bytes(),
                        seqno,
                        value_type,
                    )
                })
                .collect();
            let watermark = (rng.next(3) > 0).then(|| rng.next(seqno));
            let (mut added, mut freed, mut size_after) = (0, 0, single.size());
            for item in items.clone() {
                let (item_size, size, item_freed) = single.insert_pruning(item, watermark);
                added += item_size;
                freed += item_freed;
                size_after = size;
            }
            let inserted = batched.insert_batch_pruning(items, watermark);
            assert_eq!(
                Inserted {
                    added,
                    size_after,
                    freed
                },
                inserted
            );
            assert_eq!(single.len(), batched.len());
            assert_eq!(single.get_highest_seqno(), batched.get_highest_seqno());
            seqno += 1 + rng.next(3);
        }
        assert_eq!(
            single.iter().collect::<Vec<_>>(),
            batched.iter().collect::<Vec<_>>()
        );
    }
}

#[test]
fn a_weak_tombstone_is_not_pruned_past() {
    let memtable = Memtable::new(0);
    memtable.insert(value(b"a", 1, ValueType::Value));
    memtable.insert(value(b"a", 2, ValueType::WeakTombstone));
    let (_, _, freed) = memtable.insert_pruning(value(b"a", 3, ValueType::Value), Some(2));
    assert_eq!(
        0, freed,
        "the weak tombstone must still meet the value it cancels"
    );
    assert_eq!(3, memtable.len());
}

#[test]
fn pruning_while_readers_iterate() {
    let memtable = std::sync::Arc::new(Memtable::new(0));
    for key in 0..64u8 {
        memtable.insert(value(&[key], 1, ValueType::Value));
    }
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let memtable = memtable.clone();
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(Relaxed) {
                    // Every key keeps at least one version, and the order holds.
                    let items: Vec<_> = memtable.iter().collect();
                    let mut keys: Vec<_> = items.iter().map(|v| v.key.user_key.to_vec()).collect();
                    keys.dedup();
                    assert_eq!(64, keys.len());
                    assert!(items.windows(2).all(|w| w[0].key < w[1].key));
                    for key in 0..64u8 {
                        assert!(memtable.get(&[key], SeqNo::MAX).is_some());
                    }
                }
            })
        })
        .collect();
    for seqno in 2..3000u64 {
        let key = (seqno % 64) as u8;
        memtable.insert_pruning(value(&[key], seqno, ValueType::Value), Some(seqno - 1));
    }
    stop.store(true, Relaxed);
    for reader in readers {
        reader.join().expect("reader panicked");
    }
    // Each key ends with its newest version plus the one at the watermark.
    assert!(memtable.len() <= 128, "{}", memtable.len());
}
