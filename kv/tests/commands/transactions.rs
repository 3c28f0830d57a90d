//! MULTI/EXEC/DISCARD/WATCH semantics, concurrency (no lost updates), and lock conflicts
//! surfacing as retryable errors with nothing applied.

use crate::harness::*;
use orcinus_kv::Reply;

#[tokio::test]
async fn multi_exec_queues_and_applies() {
    let mut h = Harness::new();
    assert_eq!(h.run("MULTI").await, ok());
    assert_eq!(h.run("SET a 1").await, Reply::Simple("QUEUED".into()));
    assert_eq!(h.run("INCR a").await, Reply::Simple("QUEUED".into()));
    assert_eq!(h.run("GET a").await, Reply::Simple("QUEUED".into()));
    assert_eq!(h.run("HSET a f v").await, Reply::Simple("QUEUED".into()));
    assert_eq!(
        h.run("MULTI").await,
        err("ERR MULTI calls can not be nested")
    );
    assert_eq!(
        h.run("EXEC").await,
        Reply::Array(vec![ok(), int(2), bulk("2"), err(WRONGTYPE)])
    );
    assert_eq!(h.run("GET a").await, bulk("2"));
    assert_eq!(h.run("EXEC").await, err("ERR EXEC without MULTI"));
    assert_eq!(h.run("DISCARD").await, err("ERR DISCARD without MULTI"));
}

#[tokio::test]
async fn queue_errors_abort_exec_and_discard_drops() {
    let mut h = Harness::new();
    h.run("MULTI").await;
    h.run("SET a 1").await;
    assert_eq!(
        h.run("GET").await,
        err("ERR wrong number of arguments for 'get' command")
    );
    assert_eq!(
        h.run("EXEC").await,
        err("EXECABORT Transaction discarded because of previous errors.")
    );
    assert_eq!(h.run("EXISTS a").await, int(0));
    h.run("MULTI").await;
    h.run("SET a 1").await;
    assert_eq!(h.run("DISCARD").await, ok());
    assert_eq!(h.run("EXISTS a").await, int(0));
}

#[tokio::test]
async fn watch_aborts_exec_when_key_changes() {
    let mut h = Harness::new();
    h.run("SET k 1").await;
    assert_eq!(h.run("WATCH k").await, ok());
    let mut other = h.new_session();
    assert_eq!(run_in(&h.server, &mut other, "SET k 2").await, ok());
    h.run("MULTI").await;
    h.run("SET k 3").await;
    assert_eq!(h.run("EXEC").await, Reply::NullArray);
    assert_eq!(h.run("GET k").await, bulk("2"));
    // Unchanged watched key: EXEC runs.
    h.run("WATCH k").await;
    h.run("MULTI").await;
    h.run("SET k 4").await;
    assert_eq!(h.run("EXEC").await, Reply::Array(vec![ok()]));
    // UNWATCH forgets.
    h.run("WATCH k").await;
    run_in(&h.server, &mut other, "SET k 5").await;
    h.run("UNWATCH").await;
    h.run("MULTI").await;
    h.run("GET k").await;
    assert_eq!(h.run("EXEC").await, Reply::Array(vec![bulk("5")]));
    h.run("MULTI").await;
    assert_eq!(
        h.run("WATCH k").await,
        err("ERR WATCH inside MULTI is not allowed")
    );
    h.run("DISCARD").await;
    // FLUSHALL touches every watched key.
    h.run("WATCH k").await;
    run_in(&h.server, &mut other, "FLUSHALL").await;
    h.run("MULTI").await;
    h.run("SET k 6").await;
    assert_eq!(h.run("EXEC").await, Reply::NullArray);
    assert_eq!(h.server.watched_key_count(), 0);
    // A session that ends while watching releases its keys.
    let mut watcher = h.new_session();
    run_in(&h.server, &mut watcher, "WATCH x y").await;
    assert_eq!(h.server.watched_key_count(), 2);
    drop(watcher);
    assert_eq!(h.server.watched_key_count(), 0);
}

#[tokio::test]
async fn concurrent_increments_are_not_lost() {
    let h = Harness::new();
    let mut tasks = Vec::new();
    for _ in 0..4 {
        let server = h.server.clone();
        tasks.push(tokio::spawn(async move {
            let mut s = server.new_session("127.0.0.1:1".into(), String::new());
            for _ in 0..25 {
                assert!(matches!(
                    run_in(&server, &mut s, "INCR ctr").await,
                    Reply::Integer(_)
                ));
                run_in(&server, &mut s, "HINCRBY h f 1").await;
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let mut h = h;
    assert_eq!(h.run("GET ctr").await, bulk("100"));
    assert_eq!(h.run("HGET h f").await, bulk("100"));
}

#[tokio::test]
async fn lock_wait_timeout_is_a_retryable_error_and_applies_nothing() {
    let mut h = Harness::new();
    h.run("SET k before").await;
    let server = h.server.clone();
    let mut holder = server.store().begin(orcinus_kv::clock::now_ms());
    holder.meta_for_update(0, b"k").await.unwrap();
    // The test engine's lock wait timeout is 2 s.
    let reply = h.run("MSET other 1 k after").await;
    assert!(
        matches!(&reply, Reply::Error(t) if t.starts_with("TRYAGAIN lock wait timeout")),
        "{reply:?}"
    );
    drop(holder);
    assert_eq!(h.run("GET k").await, bulk("before"));
    assert_eq!(h.run("EXISTS other").await, int(0));
}
