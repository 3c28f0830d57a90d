//! Keyspaces opened for large values (key-value separation): values above the threshold go to
//! blob files at flush and are rewritten by compaction's blob GC; every read path (point get,
//! old snapshot, scan) and a reopen must still return exactly what was committed.

use super::{open_temp, reopen, rt};
use crate::{Direction, Engine, Keyspace, KeyspaceOptions};
use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::Path;

const LARGE: KeyspaceOptions = KeyspaceOptions {
    point_cache: false,
    point_cache_runs: false,
    large_values: true,
};

/// A value that does not compress, different per key and round; every third key stays small
/// (below the test config's 512-byte threshold), so one keyspace holds both kinds.
fn value(key: u32, round: u32) -> Vec<u8> {
    let len = if key.is_multiple_of(3) {
        40
    } else {
        1500 + (key as usize * 37) % 3000
    };
    let mut x = u64::from(key) << 32 | u64::from(round) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn scan_all(engine: &Engine, ks: &Keyspace) -> BTreeMap<Vec<u8>, Vec<u8>> {
    engine
        .begin()
        .scan(ks, Bound::Unbounded, Bound::Unbounded, Direction::Forward)
        .map(|r| r.unwrap())
        .map(|(k, v)| (k.to_vec(), v.to_vec()))
        .collect()
}

fn blob_file_count(dir: &Path) -> usize {
    let mut count = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.parent().is_some_and(|p| p.ends_with("blobs")) {
                count += 1;
            }
        }
    }
    count
}

#[test]
fn large_values_survive_flush_compaction_and_reopen() {
    let rt = rt();
    let (dir, engine) = open_temp();
    let ks = engine.keyspace_with("big", LARGE).unwrap();
    let mut model = BTreeMap::new();
    // An old snapshot must keep reading the first round's values while later rounds overwrite
    // them and flushes and compactions run.
    let mut first_round = BTreeMap::new();
    let mut old = None;
    for round in 0..16u32 {
        for key in 0..64u32 {
            let k = format!("key{key:03}").into_bytes();
            let mut batch = engine.batch();
            if round % 5 == 4 && key % 4 == 1 {
                batch.delete(&ks, k.clone()).unwrap();
                model.remove(&k);
            } else {
                let v = value(key, round);
                batch.put(&ks, k.clone(), v.clone()).unwrap();
                model.insert(k, v);
            }
            rt.block_on(batch.commit()).unwrap();
        }
        if round == 0 {
            first_round = model.clone();
            old = Some(engine.begin());
        }
    }
    let old = old.unwrap();
    for (k, v) in &first_round {
        assert_eq!(old.get(&ks, k).unwrap().unwrap().to_vec(), *v);
    }
    drop(old);
    for (k, v) in &model {
        assert_eq!(engine.get(&ks, k).unwrap().unwrap().to_vec(), *v);
    }
    assert_eq!(scan_all(&engine, &ks), model);
    assert!(
        blob_file_count(dir.path()) > 0,
        "values above the threshold were flushed to blob files"
    );

    drop(ks);
    let engine = reopen(&dir, engine);
    let ks = engine.keyspace_with("big", LARGE).unwrap();
    assert_eq!(scan_all(&engine, &ks), model);
    for (k, v) in &model {
        assert_eq!(engine.get(&ks, k).unwrap().unwrap().to_vec(), *v);
    }
    for key in 0..64u32 {
        let k = format!("key{key:03}").into_bytes();
        if !model.contains_key(&k) {
            assert!(
                engine.get(&ks, &k).unwrap().is_none(),
                "deleted key {key} stays deleted"
            );
        }
    }
}

#[test]
fn plain_keyspaces_write_no_blob_files() {
    let rt = rt();
    let (dir, engine) = open_temp();
    let ks = engine.keyspace("plain").unwrap();
    for key in 0..300u32 {
        let mut batch = engine.batch();
        batch
            .put(&ks, format!("k{key}").into_bytes(), value(key, 1))
            .unwrap();
        rt.block_on(batch.commit()).unwrap();
    }
    drop(ks);
    let _engine = reopen(&dir, engine);
    assert_eq!(blob_file_count(dir.path()), 0);
}

/// Waits up to 10 s for the keyspace's memtable to be flushed into at least `tables` tables.
fn wait_for_tables(ks: &Keyspace, tables: usize) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed() < std::time::Duration::from_secs(10) {
        if ks.inner.table_count() >= tables {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    false
}

/// Small writes fill the memtable's entry limit (`large_value_memtable_entries`, 1024 in the
/// test config) long before its byte limit (256 KiB): it is flushed at the entry limit, also
/// after a reopen (the limit is set at every open, not recorded with the keyspace). The keys
/// are distinct: overwrites of a few keys no reader looks back at would be unlinked from the
/// memtable instead (next test).
#[test]
fn small_writes_flush_at_the_entry_limit() {
    let rt = rt();
    let (dir, engine) = open_temp();
    let entries = engine.config().large_value_memtable_entries;
    assert!(entries > 0 && entries * 100 < engine.config().large_value_memtable_bytes);
    let ks = engine.keyspace_with("big", LARGE).unwrap();
    let write_round = |engine: &Engine, ks: &Keyspace, round: u64| {
        for i in 0..entries + 10 {
            let mut batch = engine.batch();
            batch
                .put(
                    ks,
                    format!("key{i}").into_bytes(),
                    format!("{round}:{i}").into_bytes(),
                )
                .unwrap();
            rt.block_on(batch.commit()).unwrap();
        }
    };
    write_round(&engine, &ks, 0);
    assert!(wait_for_tables(&ks, 1), "flushed at the entry limit");
    assert!(ks.inner.table_count() < 3, "no flush storm");

    drop(ks);
    let engine = reopen(&dir, engine);
    let ks = engine.keyspace_with("big", LARGE).unwrap();
    let before = ks.inner.table_count();
    write_round(&engine, &ks, 1);
    assert!(
        wait_for_tables(&ks, before + 1),
        "flushed at the entry limit after a reopen"
    );
    for i in [0, entries / 2, entries + 9] {
        let got = engine
            .get(&ks, format!("key{i}").as_bytes())
            .unwrap()
            .unwrap();
        assert_eq!(got.to_vec(), format!("1:{i}").into_bytes());
    }
}

/// Overwrites of a few hot keys unlink the versions no snapshot can see (the vendored LSM's
/// `Memtable::insert_pruning`), so they never fill the memtable's entry limit — also when no
/// reader opens or closes a snapshot meanwhile (the writes refresh the GC watermark
/// themselves); a version an open snapshot reads stays readable through it however many
/// overwrites follow.
#[test]
fn hot_overwrites_keep_the_memtable_small_and_snapshots_intact() {
    let rt = rt();
    let (_dir, engine) = open_temp();
    let entries = engine.config().large_value_memtable_entries;
    let ks = engine.keyspace_with("big", LARGE).unwrap();
    let write = |i: u64| {
        let mut batch = engine.batch();
        batch
            .put(
                &ks,
                format!("key{}", i % 10).into_bytes(),
                format!("{i}").into_bytes(),
            )
            .unwrap();
        rt.block_on(batch.commit()).unwrap();
    };
    for i in 0..10 {
        write(i);
    }
    // While a snapshot is open, no version newer than it can be unlinked (the watermark stays
    // below it), so this phase stays under the entry limit.
    let held = engine.snapshot();
    for i in 10..entries / 2 {
        write(i);
    }
    for k in 0..10 {
        let held_value = held
            .get(&ks, format!("key{k}").as_bytes())
            .unwrap()
            .unwrap();
        assert_eq!(
            held_value.to_vec(),
            format!("{k}").into_bytes(),
            "held snapshot, key{k}"
        );
    }
    drop(held);
    for i in entries / 2..entries * 10 {
        write(i);
    }
    assert_eq!(0, ks.inner.table_count(), "never flushed");
    let linked = fjall::AbstractTree::active_memtable(&ks.inner.tree).len();
    assert!(linked < entries as usize / 2, "{linked} versions linked");
    let last = entries * 10 - 1;
    for k in 0..10u64 {
        let i = last - (last % 10 + 10 - k) % 10;
        let got = engine
            .get(&ks, format!("key{k}").as_bytes())
            .unwrap()
            .unwrap();
        assert_eq!(got.to_vec(), format!("{i}").into_bytes());
    }
}
