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
