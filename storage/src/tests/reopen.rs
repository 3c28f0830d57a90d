//! Every mutating operation survives a close and reopen.

use super::{open_temp, reopen, rt};
use crate::{Direction, StorageError};
use std::ops::Bound;

#[test]
fn batch_put_and_delete_survive_reopen() {
    let rt = rt();
    let (dir, engine) = open_temp();
    let a = engine.keyspace("a").unwrap();
    let b = engine.keyspace("b").unwrap();
    let mut batch = engine.batch();
    batch.put(&a, b"k1".to_vec(), b"v1".to_vec()).unwrap();
    batch.put(&b, b"k2".to_vec(), b"v2".to_vec()).unwrap();
    batch.put(&a, b"gone".to_vec(), b"x".to_vec()).unwrap();
    rt.block_on(batch.commit()).unwrap();
    let mut batch = engine.batch();
    batch.delete(&a, b"gone".to_vec()).unwrap();
    rt.block_on(batch.commit()).unwrap();
    drop((a, b));

    let engine = reopen(&dir, engine);
    let a = engine.keyspace("a").unwrap();
    let b = engine.keyspace("b").unwrap();
    assert_eq!(engine.get(&a, b"k1").unwrap().unwrap().to_vec(), b"v1");
    assert_eq!(engine.get(&b, b"k2").unwrap().unwrap().to_vec(), b"v2");
    assert!(engine.get(&a, b"gone").unwrap().is_none());
}

#[test]
fn transaction_commit_survives_reopen_and_rollback_leaves_nothing() {
    let rt = rt();
    let (dir, engine) = open_temp();
    let ks = engine.keyspace("t").unwrap();
    rt.block_on(async {
        let mut txn = engine.begin();
        txn.put(&ks, b"a", b"1".as_slice()).await.unwrap();
        txn.put(&ks, b"b", b"2".as_slice()).await.unwrap();
        txn.delete(&ks, b"b").await.unwrap();
        txn.commit().await.unwrap();
        let mut txn = engine.begin();
        txn.put(&ks, b"c", b"3".as_slice()).await.unwrap();
        txn.rollback();
        let mut txn = engine.begin();
        txn.put(&ks, b"d", b"4".as_slice()).await.unwrap();
        drop(txn);
    });
    drop(ks);
    let engine = reopen(&dir, engine);
    let ks = engine.keyspace("t").unwrap();
    let txn = engine.begin();
    let all: Vec<_> = txn
        .scan(&ks, Bound::Unbounded, Bound::Unbounded, Direction::Forward)
        .map(|r| r.unwrap())
        .map(|(k, v)| (k.to_vec(), v.to_vec()))
        .collect();
    assert_eq!(all, vec![(b"a".to_vec(), b"1".to_vec())]);
    assert_eq!(engine.stats().locked_keys, 0);
}

#[test]
fn many_writes_past_memtable_flush_survive_reopen() {
    let rt = rt();
    let (dir, engine) = open_temp();
    let ks = engine.keyspace("big").unwrap();
    for chunk in 0..20u32 {
        let mut batch = engine.batch();
        for i in 0..500u32 {
            let n = chunk * 500 + i;
            batch
                .put(&ks, n.to_be_bytes().to_vec(), vec![b'x'; 100])
                .unwrap();
        }
        rt.block_on(batch.commit()).unwrap();
    }
    drop(ks);
    let engine = reopen(&dir, engine);
    let ks = engine.keyspace("big").unwrap();
    let count = engine
        .snapshot()
        .range(&ks, Bound::Unbounded, Bound::Unbounded)
        .count();
    assert_eq!(count, 10_000);
}

#[test]
fn second_open_of_same_directory_is_refused() {
    let (dir, engine) = open_temp();
    let again = crate::Engine::open(crate::StorageConfig::for_test(dir.path().join("db")));
    assert!(matches!(again, Err(StorageError::DirectoryLocked(_))));
    drop(engine);
}

#[test]
fn writes_after_shutdown_are_refused() {
    let rt = rt();
    let (_dir, engine) = open_temp();
    let ks = engine.keyspace("t").unwrap();
    engine.shutdown().unwrap();
    let mut batch = engine.batch();
    batch.put(&ks, b"k".to_vec(), b"v".to_vec()).unwrap();
    assert!(matches!(
        rt.block_on(batch.commit()),
        Err(StorageError::ShuttingDown)
    ));
}

#[test]
fn empty_and_oversized_keys_are_errors_not_panics() {
    let rt = rt();
    let (_dir, engine) = open_temp();
    let ks = engine.keyspace("t").unwrap();
    let mut batch = engine.batch();
    assert!(matches!(
        batch.put(&ks, Vec::new(), b"v".to_vec()),
        Err(StorageError::InvalidKey(_))
    ));
    assert!(matches!(
        batch.delete(&ks, vec![1u8; 70_000]),
        Err(StorageError::InvalidKey(_))
    ));
    assert!(batch.is_empty());
    rt.block_on(async {
        let mut txn = engine.begin();
        assert!(matches!(
            txn.put(&ks, b"", b"v".as_slice()).await,
            Err(StorageError::InvalidKey(_))
        ));
        assert!(matches!(
            txn.get_for_update(&ks, b"").await,
            Err(StorageError::InvalidKey(_))
        ));
        txn.commit().await.unwrap();
    });
    assert!(matches!(
        engine.keyspace("bad name"),
        Err(StorageError::InvalidKeyspaceName(_))
    ));
}

#[test]
fn deferred_commit_is_visible_at_once_and_durable_once_its_ticket_resolves() {
    let (dir, engine) = open_temp();
    let rt = rt();
    let ks = engine.keyspace("t").unwrap();
    let mut tickets = Vec::new();
    for i in 0u32..20 {
        let mut txn = engine.begin();
        rt.block_on(txn.put(&ks, &i.to_be_bytes(), vec![1u8; 10]))
            .unwrap();
        tickets.push(txn.commit_deferred().unwrap());
        // Read-your-writes across commits before any of them is durable.
        assert!(engine.get(&ks, &i.to_be_bytes()).unwrap().is_some());
    }
    let mut batch = engine.batch();
    batch.put(&ks, b"batch".to_vec(), b"v".to_vec()).unwrap();
    tickets.push(batch.commit_deferred().unwrap());
    if let Some(last) = tickets.pop() {
        rt.block_on(last.wait()).unwrap();
    }
    drop(tickets);
    drop(ks);
    let engine = reopen(&dir, engine);
    let ks = engine.keyspace("t").unwrap();
    for i in 0u32..20 {
        assert!(engine.get(&ks, &i.to_be_bytes()).unwrap().is_some());
    }
    assert!(engine.get(&ks, b"batch").unwrap().is_some());
}

/// Past 64 MB the LSM rotates its journal; the commit pipeline must notice (and sync through the
/// LSM for that cycle) and every acknowledged commit must survive.
#[test]
fn commits_across_a_journal_rotation_survive_reopen() {
    let (dir, engine) = open_temp();
    let rt = rt();
    let ks = engine.keyspace("t").unwrap();
    // Incompressible (the LSM compresses large journal entries).
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let value: Vec<u8> = (0..512 * 1024)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x.to_le_bytes()[0]
        })
        .collect();
    // The LSM rotates when a memtable flush finds the journal past 64 MB; keep committing until
    // the pipeline has seen the rotation, then a few more on the new journal.
    let (mut written, mut extra) = (0u32, 0);
    while written < 300 && extra < 5 {
        let mut batch = engine.batch();
        batch
            .put(&ks, written.to_be_bytes().to_vec(), value.clone())
            .unwrap();
        rt.block_on(batch.commit()).unwrap();
        written += 1;
        if engine.stats().locked_syncs >= 2 {
            extra += 1;
        }
    }
    let stats = engine.stats();
    assert!(
        stats.locked_syncs >= 2,
        "no rotation seen: {} locked syncs of {}",
        stats.locked_syncs,
        stats.syncs
    );
    assert!(stats.syncs > stats.locked_syncs, "the fast path never ran");
    drop(ks);
    let engine = reopen(&dir, engine);
    let ks = engine.keyspace("t").unwrap();
    for i in 0..written {
        let got = engine.get(&ks, &i.to_be_bytes()).unwrap().unwrap();
        assert_eq!(got.len(), value.len());
    }
}
