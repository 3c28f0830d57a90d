//! A keyspace with a point cache reads exactly what one without it reads: snapshot reads of old
//! transactions, latest reads under lock, batch deletes, eviction (the test cache is tiny) and
//! reopen, checked against a BTreeMap model; with keys cached one per entry and in runs (the
//! test's keys all fall in one run).

use super::{open_temp, rt};
use crate::{Engine, KeyspaceOptions, StorageConfig};
use proptest::prelude::*;
use std::collections::BTreeMap;

type Model = BTreeMap<u8, Vec<u8>>;

#[derive(Debug, Clone)]
enum Step {
    /// Transactional put of key `k`.
    Put(u8, Vec<u8>),
    /// Batch delete of key `k`.
    Delete(u8),
    /// Batch put of key `k`.
    BatchPut(u8, Vec<u8>),
    /// Opens a reader (replacing the previous one) that keeps its snapshot.
    OpenReader,
    /// Reads `k` in a fresh transaction, in the open reader, and with a locking read.
    Read(u8),
    Reopen,
}

fn value() -> impl Strategy<Value = Vec<u8>> {
    // Up to 3 KiB, so that a few dozen keys overflow the 64 KiB test cache.
    (any::<u8>(), 0usize..3072).prop_map(|(b, n)| vec![b; n])
}

fn step() -> impl Strategy<Value = Step> {
    let k = 0u8..40;
    prop_oneof![
        3 => (k.clone(), value()).prop_map(|(k, v)| Step::Put(k, v)),
        1 => k.clone().prop_map(Step::Delete),
        1 => (k.clone(), value()).prop_map(|(k, v)| Step::BatchPut(k, v)),
        1 => Just(Step::OpenReader),
        4 => k.prop_map(Step::Read),
        1 => Just(Step::Reopen),
    ]
}

fn key(k: u8) -> Vec<u8> {
    vec![b'k', k]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]
    #[test]
    fn cached_reads_match_the_model(
        steps in prop::collection::vec(step(), 1..120),
        runs in any::<bool>(),
    ) {
        let rt = rt();
        let dir = tempfile::tempdir().unwrap();
        let config = || StorageConfig::for_test(dir.path().join("db"));
        let mut engine = Engine::open(config()).unwrap();
        let mut model = Model::new();
        let mut reader: Option<(crate::Transaction, Model)> = None;
        for step in &steps {
            let options = KeyspaceOptions {
                point_cache: true,
                point_cache_runs: runs,
                ..KeyspaceOptions::default()
            };
            let ks = engine.keyspace_with("cached", options).unwrap();
            match step {
                Step::Put(k, v) => rt.block_on(async {
                    let mut txn = engine.begin();
                    txn.put(&ks, &key(*k), v.clone()).await.unwrap();
                    txn.commit().await.unwrap();
                }),
                Step::Delete(k) => {
                    let mut b = engine.batch();
                    b.delete(&ks, key(*k)).unwrap();
                    rt.block_on(b.commit()).unwrap();
                }
                Step::BatchPut(k, v) => {
                    let mut b = engine.batch();
                    b.put(&ks, key(*k), v.clone()).unwrap();
                    rt.block_on(b.commit()).unwrap();
                }
                Step::OpenReader => reader = Some((engine.begin(), model.clone())),
                Step::Read(k) => {
                    let want = model.get(k).cloned();
                    let fresh = engine.begin();
                    prop_assert_eq!(fresh.get(&ks, &key(*k)).unwrap().map(|v| v.to_vec()), want.clone());
                    prop_assert_eq!(engine.get(&ks, &key(*k)).unwrap().map(|v| v.to_vec()), want.clone());
                    if let Some((old, seen)) = &reader {
                        let then = seen.get(k).cloned();
                        prop_assert_eq!(old.get(&ks, &key(*k)).unwrap().map(|v| v.to_vec()), then);
                    }
                    let mut locking = engine.begin();
                    let latest = rt.block_on(locking.get_for_update(&ks, &key(*k))).unwrap();
                    prop_assert_eq!(latest.map(|v| v.to_vec()), want);
                    locking.rollback();
                }
                Step::Reopen => {
                    reader = None;
                    drop(ks);
                    engine.shutdown().unwrap();
                    drop(engine);
                    engine = Engine::open(config()).unwrap();
                    continue;
                }
            }
            match step {
                Step::Put(k, v) | Step::BatchPut(k, v) => {
                    model.insert(*k, v.clone());
                }
                Step::Delete(k) => {
                    model.remove(k);
                }
                _ => {}
            }
        }
    }
}

#[test]
fn an_old_snapshot_never_sees_a_newer_cached_value_nor_caches_its_own() {
    let rt = rt();
    let (_dir, engine) = open_temp();
    let ks = engine.keyspace_with_point_cache("cached").unwrap();
    rt.block_on(async {
        let mut w = engine.begin();
        w.put(&ks, b"a", b"1".as_slice()).await.unwrap();
        w.commit().await.unwrap();
        let old = engine.begin();
        let mut w = engine.begin();
        w.put(&ks, b"a", b"2".as_slice()).await.unwrap();
        w.commit().await.unwrap();
        assert_eq!(old.get(&ks, b"a").unwrap().unwrap().to_vec(), b"1");
        assert_eq!(
            engine.begin().get(&ks, b"a").unwrap().unwrap().to_vec(),
            b"2"
        );
        assert_eq!(old.get(&ks, b"a").unwrap().unwrap().to_vec(), b"1");
    });
}
