//! Property test: random sequences of put / delete / batch / transaction (committed or rolled
//! back, with scans over pending writes) / reopen, checked against an in-memory BTreeMap model.

use super::rt;
use crate::{Direction, Engine, StorageConfig};
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::ops::Bound;

type Model = BTreeMap<(u8, Vec<u8>), Vec<u8>>;

#[derive(Debug, Clone)]
enum Write {
    Put(u8, Vec<u8>, Vec<u8>),
    Delete(u8, Vec<u8>),
}

#[derive(Debug, Clone)]
enum Step {
    Single(Write),
    Batch(Vec<Write>),
    Txn {
        writes: Vec<Write>,
        commit: bool,
        scan_from: Vec<u8>,
        reverse: bool,
    },
    Reopen,
}

fn key() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(vec![0u8, 1, 2, 0xFF]), 1..4)
}

fn write() -> impl Strategy<Value = Write> {
    prop_oneof![
        (0u8..2, key(), prop::collection::vec(any::<u8>(), 0..8))
            .prop_map(|(s, k, v)| Write::Put(s, k, v)),
        (0u8..2, key()).prop_map(|(s, k)| Write::Delete(s, k)),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => write().prop_map(Step::Single),
        2 => prop::collection::vec(write(), 0..6).prop_map(Step::Batch),
        3 => (prop::collection::vec(write(), 0..6), any::<bool>(), key(), any::<bool>())
            .prop_map(|(writes, commit, scan_from, reverse)| Step::Txn { writes, commit, scan_from, reverse }),
        1 => Just(Step::Reopen),
    ]
}

fn apply(model: &mut Model, w: &Write) {
    match w {
        Write::Put(s, k, v) => {
            model.insert((*s, k.clone()), v.clone());
        }
        Write::Delete(s, k) => {
            model.remove(&(*s, k.clone()));
        }
    }
}

fn contents(engine: &Engine, space: u8) -> Vec<(Vec<u8>, Vec<u8>)> {
    let ks = engine.keyspace(&format!("ks{space}")).unwrap();
    engine
        .snapshot()
        .range(&ks, Bound::Unbounded, Bound::Unbounded)
        .map(|r| r.unwrap())
        .map(|(k, v)| (k.to_vec(), v.to_vec()))
        .collect()
}

fn expected(model: &Model, space: u8) -> Vec<(Vec<u8>, Vec<u8>)> {
    model
        .iter()
        .filter(|((s, _), _)| *s == space)
        .map(|((_, k), v)| (k.clone(), v.clone()))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    #[test]
    fn engine_matches_model(steps in prop::collection::vec(step(), 1..30)) {
        let rt = rt();
        let dir = tempfile::tempdir().unwrap();
        let config = || StorageConfig::for_test(dir.path().join("db"));
        let mut engine = Engine::open(config()).unwrap();
        let mut model = Model::new();
        for step in &steps {
            match step {
                Step::Single(w) => {
                    let mut b = engine.batch();
                    push(&engine, &mut b, w);
                    rt.block_on(b.commit()).unwrap();
                    apply(&mut model, w);
                }
                Step::Batch(ws) => {
                    let mut b = engine.batch();
                    for w in ws { push(&engine, &mut b, w); }
                    rt.block_on(b.commit()).unwrap();
                    for w in ws { apply(&mut model, w); }
                }
                Step::Txn { writes, commit, scan_from, reverse } => {
                    let mut pending = model.clone();
                    rt.block_on(async {
                        let mut txn = engine.begin();
                        for w in writes {
                            match w {
                                Write::Put(s, k, v) => {
                                    let ks = engine.keyspace(&format!("ks{s}")).unwrap();
                                    txn.put(&ks, k, v.clone()).await.unwrap();
                                }
                                Write::Delete(s, k) => {
                                    let ks = engine.keyspace(&format!("ks{s}")).unwrap();
                                    txn.delete(&ks, k).await.unwrap();
                                }
                            }
                            apply(&mut pending, w);
                        }
                        let ks = engine.keyspace("ks0").unwrap();
                        let dir = if *reverse { Direction::Reverse } else { Direction::Forward };
                        let got: Vec<(Vec<u8>, Vec<u8>)> = txn
                            .scan(&ks, Bound::Included(scan_from.as_slice()), Bound::Unbounded, dir)
                            .map(|r| r.unwrap())
                            .map(|(k, v)| (k.to_vec(), v.to_vec()))
                            .collect();
                        let mut want: Vec<_> = expected(&pending, 0)
                            .into_iter()
                            .filter(|(k, _)| k.as_slice() >= scan_from.as_slice())
                            .collect();
                        if *reverse { want.reverse(); }
                        assert_eq!(got, want, "scan over pending writes");
                        if *commit { txn.commit().await.unwrap(); } else { txn.rollback(); }
                    });
                    if *commit { model = pending; }
                }
                Step::Reopen => {
                    engine.shutdown().unwrap();
                    drop(engine);
                    engine = Engine::open(config()).unwrap();
                }
            }
            for space in 0..2 {
                prop_assert_eq!(contents(&engine, space), expected(&model, space));
            }
        }
        prop_assert_eq!(engine.stats().locked_keys, 0);
    }
}

fn push(engine: &Engine, b: &mut crate::WriteBatch, w: &Write) {
    match w {
        Write::Put(s, k, v) => b
            .put(
                &engine.keyspace(&format!("ks{s}")).unwrap(),
                k.clone(),
                v.clone(),
            )
            .unwrap(),
        Write::Delete(s, k) => b
            .delete(&engine.keyspace(&format!("ks{s}")).unwrap(), k.clone())
            .unwrap(),
    }
}
