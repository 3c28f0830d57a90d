//! Blocking list commands: a push from another client wakes BLPOP, timeouts give the null
//! reply, blocked clients are served in FIFO order, BLMOVE / BRPOPLPUSH / BLMPOP, MULTI runs
//! them without blocking, a disconnect or a dropped waiter leaves the queue, and concurrent
//! pushers and blocked poppers lose nothing.

use crate::harness::*;
use orcinus_kv::Reply;
use std::time::Duration;

fn nested_pair(key: &str, value: &str) -> Reply {
    array(&[key, value])
}

async fn wait_blocked(h: &Harness, n: usize) {
    for _ in 0..500 {
        if h.server.blocked_clients() == n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    panic!(
        "expected {n} blocked clients, have {}",
        h.server.blocked_clients()
    );
}

fn spawn_cmd(h: &Harness, line: &str) -> tokio::task::JoinHandle<Reply> {
    let server = h.server.clone();
    let mut session = h.new_session();
    let line = line.to_string();
    tokio::spawn(async move { run_in(&server, &mut session, &line).await })
}

#[tokio::test]
async fn blpop_is_woken_by_a_push_from_another_client() {
    let mut h = Harness::new();
    h.run("RPUSH ready x").await;
    assert_eq!(h.run("BLPOP none ready 0").await, nested_pair("ready", "x"));
    let waiter = spawn_cmd(&h, "BLPOP q1 q2 0");
    wait_blocked(&h, 1).await;
    let (Reply::Verbatim(_, info) | Reply::Bulk(info)) = h.run("INFO clients").await else {
        panic!("INFO is a bulk string")
    };
    assert!(String::from_utf8_lossy(&info).contains("blocked_clients:1\r\n"));
    assert_eq!(h.run("RPUSH q2 v1 v2").await, int(2));
    assert_eq!(waiter.await.unwrap(), nested_pair("q2", "v1"));
    assert_eq!(h.run("LRANGE q2 0 -1").await, array(&["v2"]));
    assert_eq!(h.server.blocked_clients(), 0);
    let waiter = spawn_cmd(&h, "BRPOP q2 5");
    assert_eq!(waiter.await.unwrap(), nested_pair("q2", "v2"));
}

#[tokio::test]
async fn blocking_timeout_returns_null_and_validates() {
    let mut h = Harness::new();
    let started = std::time::Instant::now();
    assert_eq!(h.run("BLPOP q 0.05").await, Reply::NullArray);
    assert!(started.elapsed() >= Duration::from_millis(50));
    assert_eq!(h.run("BLMOVE q d LEFT LEFT 0.01").await, Reply::NullArray);
    assert_eq!(h.run("BLMPOP 0.01 1 q LEFT").await, Reply::NullArray);
    assert_eq!(h.server.blocked_clients(), 0);
    assert_eq!(
        h.run("BLPOP q abc").await,
        err("ERR timeout is not a float or out of range")
    );
    assert_eq!(h.run("BLPOP q -1").await, err("ERR timeout is negative"));
    assert_eq!(
        h.run("BLPOP q inf").await,
        err("ERR timeout is out of range")
    );
    assert_eq!(
        h.run("BLPOP q").await,
        err("ERR wrong number of arguments for 'blpop' command")
    );
    assert_eq!(h.run("BLMOVE q d LEFT UP 0").await, err(SYNTAX));
    assert_eq!(
        h.run("BLMPOP 0 0 q LEFT").await,
        err("ERR numkeys should be greater than 0")
    );
}

#[tokio::test]
async fn blocked_clients_are_served_in_fifo_order() {
    let mut h = Harness::new();
    let first = spawn_cmd(&h, "BLPOP q 0");
    wait_blocked(&h, 1).await;
    let second = spawn_cmd(&h, "BLPOP q 0");
    wait_blocked(&h, 2).await;
    h.run("RPUSH q a").await;
    assert_eq!(first.await.unwrap(), nested_pair("q", "a"));
    wait_blocked(&h, 1).await;
    assert!(!second.is_finished());
    let third = spawn_cmd(&h, "BLPOP q 0");
    wait_blocked(&h, 2).await;
    h.run("RPUSH q b c").await;
    assert_eq!(second.await.unwrap(), nested_pair("q", "b"));
    assert_eq!(third.await.unwrap(), nested_pair("q", "c"));
    assert_eq!(h.run("EXISTS q").await, int(0));
}

#[tokio::test]
async fn blmove_and_brpoplpush_wait_for_the_source() {
    let mut h = Harness::new();
    let waiter = spawn_cmd(&h, "BLMOVE src dst RIGHT LEFT 0");
    wait_blocked(&h, 1).await;
    h.run("RPUSH src a b").await;
    assert_eq!(waiter.await.unwrap(), bulk("b"));
    assert_eq!(h.run("LRANGE dst 0 -1").await, array(&["b"]));
    // A client blocked on `dst` is woken by the move into it.
    let chained = spawn_cmd(&h, "BRPOPLPUSH other out 0");
    let on_dst = spawn_cmd(&h, "BLMPOP 0.2 2 nothing other LEFT COUNT 5");
    wait_blocked(&h, 2).await;
    assert_eq!(h.run("LMOVE src other LEFT LEFT").await, bulk("a"));
    let (a, b) = (chained.await.unwrap(), on_dst.await.unwrap());
    // The first waiter on `other` gets the element; the BLMPOP then times out.
    assert_eq!(a, bulk("a"));
    assert_eq!(b, Reply::NullArray);
    assert_eq!(h.run("LRANGE out 0 -1").await, array(&["a"]));
}

#[tokio::test]
async fn blocking_commands_inside_multi_do_not_block() {
    let mut h = Harness::new();
    h.run("MULTI").await;
    h.run("BLPOP q 0").await;
    h.run("BLMOVE q d LEFT LEFT 0").await;
    h.run("RPUSH q a").await;
    h.run("BRPOP q 0").await;
    assert_eq!(
        h.run("EXEC").await,
        Reply::Array(vec![
            Reply::NullArray,
            null(),
            int(1),
            nested_pair("q", "a")
        ])
    );
}

#[tokio::test]
async fn a_disconnect_cancels_the_wait() {
    let h = Harness::new();
    let server = h.server.clone();
    let mut session = h.new_session();
    let disconnect = session.disconnect_handle();
    let waiter = tokio::spawn(async move { run_in(&server, &mut session, "BLPOP q 0").await });
    wait_blocked(&h, 1).await;
    disconnect.fire();
    assert_eq!(waiter.await.unwrap(), Reply::NullArray);
    assert_eq!(h.server.blocked_clients(), 0);
}

#[tokio::test]
async fn a_dropped_waiter_leaves_the_queue() {
    let mut h = Harness::new();
    let dropped = spawn_cmd(&h, "BLPOP q 0");
    wait_blocked(&h, 1).await;
    let served = spawn_cmd(&h, "BLPOP q 0");
    wait_blocked(&h, 2).await;
    dropped.abort();
    let _ = dropped.await;
    wait_blocked(&h, 1).await;
    h.run("RPUSH q a").await;
    assert_eq!(served.await.unwrap(), nested_pair("q", "a"));
}

#[tokio::test]
async fn concurrent_pushers_and_blocked_poppers_lose_nothing() {
    let h = Harness::new();
    let mut poppers = Vec::new();
    for _ in 0..4 {
        let server = h.server.clone();
        let mut session = h.new_session();
        poppers.push(tokio::spawn(async move {
            let mut got = Vec::new();
            for _ in 0..25 {
                match run_in(&server, &mut session, "BRPOP work 5").await {
                    Reply::Array(items) => got.push(items[1].clone()),
                    other => panic!("{other:?}"),
                }
            }
            got
        }));
    }
    let mut pushers = Vec::new();
    for p in 0..4 {
        let server = h.server.clone();
        let mut session = h.new_session();
        pushers.push(tokio::spawn(async move {
            for i in 0..25 {
                let line = format!("LPUSH work {p}-{i}");
                let reply = run_in(&server, &mut session, &line).await;
                assert!(matches!(reply, Reply::Integer(_)), "{reply:?}");
            }
        }));
    }
    for p in pushers {
        p.await.unwrap();
    }
    let mut all = Vec::new();
    for p in poppers {
        all.extend(p.await.unwrap());
    }
    assert_eq!(all.len(), 100);
    all.sort_by_key(|r| format!("{r:?}"));
    all.dedup();
    assert_eq!(all.len(), 100, "every element popped exactly once");
    assert_eq!(h.server.blocked_clients(), 0);
}
