//! Transaction semantics: snapshot isolation for plain reads, latest reads under lock,
//! deadlock victim selection, lock-wait timeout, delete-then-insert without duplicates.

use super::{open_temp, rt};
use crate::{Direction, Engine, Keyspace, StorageError};
use std::ops::Bound;
use std::time::Duration;

async fn put_committed(engine: &Engine, ks: &Keyspace, k: &[u8], v: &[u8]) {
    let mut txn = engine.begin();
    txn.put(ks, k, v).await.unwrap();
    txn.commit().await.unwrap();
}

#[test]
fn snapshot_reads_are_repeatable_and_see_own_writes() {
    let rt = rt();
    let (_dir, engine) = open_temp();
    let ks = engine.keyspace("t").unwrap();
    rt.block_on(async {
        put_committed(&engine, &ks, b"a", b"1").await;
        let mut reader = engine.begin();
        put_committed(&engine, &ks, b"a", b"2").await;
        put_committed(&engine, &ks, b"b", b"new").await;
        assert_eq!(reader.get(&ks, b"a").unwrap().unwrap().to_vec(), b"1");
        assert!(reader.get(&ks, b"b").unwrap().is_none());
        // A locking read sees the latest committed value.
        assert_eq!(
            reader
                .get_for_update(&ks, b"a")
                .await
                .unwrap()
                .unwrap()
                .to_vec(),
            b"2"
        );
        reader.put(&ks, b"c", b"mine".as_slice()).await.unwrap();
        reader.delete(&ks, b"a").await.unwrap();
        let seen: Vec<Vec<u8>> = reader
            .scan(&ks, Bound::Unbounded, Bound::Unbounded, Direction::Forward)
            .map(|r| r.unwrap().0.to_vec())
            .collect();
        assert_eq!(seen, vec![b"c".to_vec()]);
        let rev: Vec<Vec<u8>> = reader
            .scan_prefix(&ks, b"", Direction::Reverse)
            .map(|r| r.unwrap().0.to_vec())
            .collect();
        assert_eq!(rev, vec![b"c".to_vec()]);
        reader.rollback();
    });
}

#[test]
fn deadlock_picks_one_victim_and_the_other_commits() {
    let rt = rt();
    let (_dir, engine) = open_temp();
    let ks = engine.keyspace("t").unwrap();
    rt.block_on(async {
        let mut t1 = engine.begin();
        let mut t2 = engine.begin();
        t1.put(&ks, b"x", b"t1".as_slice()).await.unwrap();
        t2.put(&ks, b"y", b"t2".as_slice()).await.unwrap();
        let ks1 = ks.clone();
        let first = tokio::spawn(async move {
            t1.put(&ks1, b"y", b"t1".as_slice()).await?;
            t1.commit().await
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        let second = t2.put(&ks, b"x", b"t2".as_slice()).await;
        assert!(matches!(second, Err(StorageError::Deadlock)), "{second:?}");
        t2.rollback();
        first.await.unwrap().unwrap();
        assert_eq!(engine.get(&ks, b"x").unwrap().unwrap().to_vec(), b"t1");
        assert_eq!(engine.get(&ks, b"y").unwrap().unwrap().to_vec(), b"t1");
    });
}

#[test]
fn lock_wait_times_out() {
    let rt = rt();
    let dir = tempfile::tempdir().unwrap();
    let mut config = crate::StorageConfig::for_test(dir.path().join("db"));
    config.lock_wait_timeout_ms = 100;
    let engine = Engine::open(config).unwrap();
    let ks = engine.keyspace("t").unwrap();
    rt.block_on(async {
        let mut holder = engine.begin();
        holder.put(&ks, b"k", b"1".as_slice()).await.unwrap();
        let mut waiter = engine.begin();
        let started = std::time::Instant::now();
        let r = waiter.get_for_update(&ks, b"k").await;
        assert!(matches!(r, Err(StorageError::LockWaitTimeout)), "{r:?}");
        assert!(started.elapsed() >= Duration::from_millis(90));
        drop(waiter);
        holder.commit().await.unwrap();
    });
    assert_eq!(engine.stats().locked_keys, 0);
}

#[test]
fn delete_then_insert_of_same_key_waits_instead_of_duplicating() {
    let rt = rt();
    let (_dir, engine) = open_temp();
    let ks = engine.keyspace("t").unwrap();
    rt.block_on(async {
        put_committed(&engine, &ks, b"id5", b"old").await;
        let mut deleter = engine.begin();
        deleter.delete(&ks, b"id5").await.unwrap();
        let engine2 = engine.clone();
        let ks2 = ks.clone();
        let inserter = tokio::spawn(async move {
            let mut txn = engine2.begin();
            let existing = txn.get_for_update(&ks2, b"id5").await.unwrap();
            assert!(existing.is_none(), "insert must see the committed delete");
            txn.put(&ks2, b"id5", b"new".as_slice()).await.unwrap();
            txn.commit().await.unwrap();
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        deleter.commit().await.unwrap();
        inserter.await.unwrap();
        assert_eq!(engine.get(&ks, b"id5").unwrap().unwrap().to_vec(), b"new");
    });
}

#[test]
fn concurrent_increments_are_not_lost() {
    let rt = rt();
    let (_dir, engine) = open_temp();
    let ks = engine.keyspace("t").unwrap();
    rt.block_on(async {
        let mut tasks = Vec::new();
        for _ in 0..16 {
            let engine = engine.clone();
            let ks = ks.clone();
            tasks.push(tokio::spawn(async move {
                for _ in 0..20 {
                    let mut txn = engine.begin();
                    let cur = txn.get_for_update(&ks, b"ctr").await.unwrap();
                    let n = cur.map_or(0, |v| u64::from_be_bytes(v.as_ref().try_into().unwrap()));
                    txn.put(&ks, b"ctr", (n + 1).to_be_bytes().to_vec())
                        .await
                        .unwrap();
                    txn.commit().await.unwrap();
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
    });
    let v = engine.get(&ks, b"ctr").unwrap().unwrap();
    assert_eq!(u64::from_be_bytes(v.as_ref().try_into().unwrap()), 320);
}

#[test]
fn rollback_to_a_savepoint_undoes_only_the_later_writes() {
    let rt = rt();
    let (_dir, engine) = open_temp();
    let ks = engine.keyspace("t").unwrap();
    rt.block_on(async {
        put_committed(&engine, &ks, b"a", b"old").await;
        let mut txn = engine.begin();
        txn.put(&ks, b"a", b"1".as_slice()).await.unwrap();
        let first = txn.savepoint();
        txn.put(&ks, b"a", b"2".as_slice()).await.unwrap();
        txn.put(&ks, b"b", b"2".as_slice()).await.unwrap();
        let second = txn.savepoint();
        assert_eq!(txn.writes_since(first), 2);
        assert_eq!(txn.writes_since(second), 0);
        txn.delete(&ks, b"a").await.unwrap();
        txn.rollback_to(second);
        assert_eq!(txn.get(&ks, b"a").unwrap().unwrap().to_vec(), b"2");
        txn.rollback_to(first);
        assert_eq!(txn.get(&ks, b"a").unwrap().unwrap().to_vec(), b"1");
        assert!(txn.get(&ks, b"b").unwrap().is_none());
        txn.put(&ks, b"c", b"3".as_slice()).await.unwrap();
        txn.commit().await.unwrap();
        assert_eq!(engine.get(&ks, b"a").unwrap().unwrap().to_vec(), b"1");
        assert!(engine.get(&ks, b"b").unwrap().is_none());
        assert_eq!(engine.get(&ks, b"c").unwrap().unwrap().to_vec(), b"3");
    });
}

#[test]
fn a_transaction_that_does_not_wait_fails_at_once_and_locks_nothing() {
    let rt = rt();
    let (_dir, engine) = open_temp();
    let ks = engine.keyspace("t").unwrap();
    rt.block_on(async {
        let mut holder = engine.begin();
        holder.put(&ks, b"x", b"h".as_slice()).await.unwrap();
        let mut other = engine.begin();
        other.set_lock_wait(false);
        other.put(&ks, b"y", b"o".as_slice()).await.unwrap();
        let started = std::time::Instant::now();
        let refused = other.put(&ks, b"x", b"o".as_slice()).await;
        assert!(
            matches!(refused, Err(StorageError::WouldWait)),
            "{refused:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(1));
        holder.commit().await.unwrap();
        other.put(&ks, b"x", b"o".as_slice()).await.unwrap();
        other.commit().await.unwrap();
        assert_eq!(engine.get(&ks, b"x").unwrap().unwrap().to_vec(), b"o");
        assert_eq!(engine.stats().locked_keys, 0);
    });
}

#[test]
fn try_put_never_waits_and_writes_nothing_when_the_lock_is_taken() {
    let rt = rt();
    let (_dir, engine) = open_temp();
    let ks = engine.keyspace("t").unwrap();
    rt.block_on(async {
        let mut holder = engine.begin();
        holder.put(&ks, b"x", b"h".as_slice()).await.unwrap();
        // A transaction that may wait still does not wait here.
        let mut other = engine.begin();
        assert!(other.lock_waits());
        assert!(
            other
                .try_put_shared(&ks, crate::Slice::from(&b"y"[..]), b"1".as_slice())
                .unwrap()
        );
        assert!(
            !other
                .try_put_shared(&ks, crate::Slice::from(&b"x"[..]), b"1".as_slice())
                .unwrap()
        );
        assert!(other.get(&ks, b"x").unwrap().is_none());
        // A key it already holds is written again without a new lock.
        assert!(
            other
                .try_put_shared(&ks, crate::Slice::from(&b"y"[..]), b"2".as_slice())
                .unwrap()
        );
        holder.commit().await.unwrap();
        other.commit().await.unwrap();
        assert_eq!(engine.get(&ks, b"x").unwrap().unwrap().to_vec(), b"h");
        assert_eq!(engine.get(&ks, b"y").unwrap().unwrap().to_vec(), b"2");
        assert_eq!(engine.stats().locked_keys, 0);
    });
}

#[test]
fn a_snapshot_on_read_is_taken_by_the_first_plain_read_and_then_kept() {
    let rt = rt();
    let (_dir, engine) = open_temp();
    let ks = engine.keyspace("t").unwrap();
    rt.block_on(async {
        put_committed(&engine, &ks, b"a", b"1").await;
        let reader = engine.begin_snapshot_on_read();
        put_committed(&engine, &ks, b"a", b"2").await;
        // Committed after begin, before the first read: seen.
        assert_eq!(reader.get(&ks, b"a").unwrap().unwrap().to_vec(), b"2");
        put_committed(&engine, &ks, b"a", b"3").await;
        put_committed(&engine, &ks, b"b", b"new").await;
        // Later reads stay on that snapshot.
        assert_eq!(reader.get(&ks, b"a").unwrap().unwrap().to_vec(), b"2");
        assert!(reader.get(&ks, b"b").unwrap().is_none());
        let scanned = reader
            .scan(&ks, Bound::Unbounded, Bound::Unbounded, Direction::Forward)
            .count();
        assert_eq!(scanned, 1);
    });
}
